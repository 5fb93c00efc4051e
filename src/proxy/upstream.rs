//! The upstream side: hyper's HTTP/1.1 client on the proxy's tokio runtime
//! (rustls with the webpki roots for https), so that an answer in flight
//! holds no thread of its own, is dropped the moment its client goes away,
//! and is timed event by event:
//!
//! - connect: the TCP connection and the TLS handshake;
//! - first byte: from the request sent to the answer's status and headers
//!   (a whole JSON answer's headers come only once it is generated);
//! - idle: between two pieces of the answer's body (a stream's events).
//!
//! Idle connections are kept for the next request to the same upstream (a
//! few per upstream); one the upstream closed meanwhile is replaced, and a
//! request it could not send goes on a new connection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

use super::Upstream;

/// A request body sent upstream: the forwarded body, or the client's
/// passed on as it arrives.
pub(crate) type UpBody = BoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;

/// Idle connections kept per upstream.
const IDLE_PER_UPSTREAM: usize = 8;

/// Why an upstream request got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum UpstreamError {
    /// No connection (refused, unresolved, TLS failed) or none in time.
    Connect(String),
    /// The status and headers did not come within the first-byte timeout.
    FirstByte(Duration),
    /// The request failed on the connection.
    Send(String),
}

impl std::fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpstreamError::Connect(e) => write!(f, "cannot connect: {e}"),
            UpstreamError::FirstByte(t) => {
                write!(
                    f,
                    "no answer within {} s (--first-byte-timeout)",
                    t.as_secs()
                )
            }
            UpstreamError::Send(e) => write!(f, "the request failed: {e}"),
        }
    }
}

/// The upstream client: the TLS settings, the idle connections and the
/// connect and first-byte timeouts.
pub(crate) struct Client {
    tls: tokio_rustls::TlsConnector,
    idle: Mutex<HashMap<String, Vec<SendRequest<UpBody>>>>,
    connect_timeout: Duration,
    first_byte_timeout: Duration,
}

impl Client {
    pub(crate) fn new(connect_timeout: Duration, first_byte_timeout: Duration) -> Client {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Client {
            tls: tokio_rustls::TlsConnector::from(Arc::new(config)),
            idle: Mutex::new(HashMap::new()),
            connect_timeout,
            first_byte_timeout,
        }
    }

    /// Send `req` (origin-form, its `Host` set) to `upstream` and wait for
    /// the answer's head. Dropping the future drops the request and its
    /// connection.
    pub(crate) async fn send(
        &self,
        upstream: &Upstream,
        req: Request<UpBody>,
    ) -> Result<Response<Incoming>, UpstreamError> {
        let key = upstream.origin();
        let mut req = req;
        // A kept connection first; if the upstream closed it before the
        // request went out, the request goes on a new one.
        while let Some(mut sender) = self.checkout(&key) {
            match self.wait(sender.try_send_request(req)).await {
                Ok(Ok(resp)) => {
                    self.keep(&key, sender);
                    return Ok(resp);
                }
                Ok(Err(mut e)) => match e.take_message() {
                    Some(unsent) => req = unsent,
                    None => return Err(UpstreamError::Send(e.into_error().to_string())),
                },
                Err(timeout) => return Err(timeout),
            }
        }
        let mut sender = self.connect(upstream).await?;
        match self.wait(sender.send_request(req)).await? {
            Ok(resp) => {
                self.keep(&key, sender);
                Ok(resp)
            }
            Err(e) => Err(UpstreamError::Send(e.to_string())),
        }
    }

    async fn wait<T>(&self, f: impl Future<Output = T>) -> Result<T, UpstreamError> {
        tokio::time::timeout(self.first_byte_timeout, f)
            .await
            .map_err(|_| UpstreamError::FirstByte(self.first_byte_timeout))
    }

    /// A kept connection to `key` ready for a request.
    fn checkout(&self, key: &str) -> Option<SendRequest<UpBody>> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let list = idle.get_mut(key)?;
        list.retain(|s| !s.is_closed());
        let i = list.iter().rposition(SendRequest::is_ready)?;
        Some(list.remove(i))
    }

    /// Keep a connection for a later request (it is ready again once this
    /// request's answer was read to its end).
    fn keep(&self, key: &str, sender: SendRequest<UpBody>) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let list = idle.entry(key.to_string()).or_default();
        list.retain(|s| !s.is_closed());
        if list.len() >= IDLE_PER_UPSTREAM {
            list.remove(0);
        }
        list.push(sender);
    }

    async fn connect(&self, upstream: &Upstream) -> Result<SendRequest<UpBody>, UpstreamError> {
        let connect = async {
            let tcp = tokio::net::TcpStream::connect((upstream.host(), upstream.port()))
                .await
                .map_err(|e| e.to_string())?;
            let _ = tcp.set_nodelay(true);
            if !upstream.tls() {
                return handshake(tcp).await;
            }
            let name = rustls::pki_types::ServerName::try_from(upstream.host().to_string())
                .map_err(|e| e.to_string())?;
            let tls = self
                .tls
                .connect(name, tcp)
                .await
                .map_err(|e| e.to_string())?;
            handshake(tls).await
        };
        match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(r) => r.map_err(UpstreamError::Connect),
            Err(_) => Err(UpstreamError::Connect(format!(
                "no connection within {} s (--connect-timeout)",
                self.connect_timeout.as_secs()
            ))),
        }
    }
}

/// HTTP/1.1 over `io`, its connection driven by a task of its own (which
/// ends when the connection closes).
async fn handshake<T>(io: T) -> Result<SendRequest<UpBody>, String>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}
