//! The HTTP side: hyper 1 (HTTP/1.1, keep-alive) on a small tokio runtime
//! takes the client's requests; ureq 3 (rustls) makes the upstream request
//! on a blocking thread and its body is read as it arrives, each chunk
//! handed to the client at once through a bounded channel (no buffering of
//! a streamed answer) and to the answer's assembler beside it.
//!
//! Two routes run the engine (`POST /v1/messages`, `POST /v1/responses`);
//! every other request, and every answer that is not a success, passes
//! through as it came. Refused: absolute-form (proxy) requests and CONNECT
//! (this is no open proxy), and, unless remote clients were allowed, a
//! `Host` that is not a loopback name (a page's DNS rebinding).

use std::convert::Infallible;
use std::io::Read;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming};
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request as HttpRequest, Response, StatusCode};

use super::engine::{CallError, Ended, Engine, ForwardedCall, Prepared};
use super::request::{self, Api};
use super::{ProxyEvent, ProxySettings, ServeOptions, Upstream};
use crate::fault::{self, ProxyPoint};
use crate::model::Message;

/// The largest request body read (a long session's request is tens of MB).
const MAX_BODY: usize = 512 << 20;
/// Chunks of an answer in flight between the upstream and the client.
const CHUNKS_IN_FLIGHT: usize = 16;

/// A response body: whole, or chunks as they arrive.
pub(crate) enum ProxyBody {
    Whole(Option<Bytes>),
    Stream(tokio::sync::mpsc::Receiver<Result<Bytes, std::io::Error>>),
}

impl hyper::body::Body for ProxyBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        match self.get_mut() {
            ProxyBody::Whole(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            ProxyBody::Stream(rx) => rx.poll_recv(cx).map(|c| c.map(|r| r.map(Frame::data))),
        }
    }
}

struct State {
    engine: Engine,
    agent: ureq::Agent,
    opts: ServeOptions,
    events: Arc<dyn Fn(ProxyEvent) + Send + Sync>,
}

/// Serve until Ctrl-C (or until the listener fails).
pub fn serve(
    settings: ProxySettings,
    opts: ServeOptions,
    events: Arc<dyn Fn(ProxyEvent) + Send + Sync>,
) -> std::io::Result<()> {
    let listener = std::net::TcpListener::bind(opts.listen)?;
    listener.set_nonblocking(true)?;
    let local = listener.local_addr()?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        // A redirect could carry the key elsewhere: never followed, passed on.
        .max_redirects(0)
        .max_redirects_will_error(false)
        .timeout_connect(Some(Duration::from_secs(30)))
        .proxy(None)
        .build()
        .into();
    let state = Arc::new(State {
        engine: Engine::new(Arc::new(settings)),
        agent,
        opts,
        events,
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("compactor-proxy")
        .build()?;
    let result = runtime.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        (state.events)(ProxyEvent::Listening(local));
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let (stream, _) = match accepted {
                        Ok(a) => a,
                        Err(e) => {
                            (state.events)(ProxyEvent::Note(format!("accept failed: {e}")));
                            continue;
                        }
                    };
                    let _ = stream.set_nodelay(true);
                    let state = Arc::clone(&state);
                    tokio::spawn(async move {
                        let service = hyper::service::service_fn(move |req| {
                            let state = Arc::clone(&state);
                            async move { Ok::<_, Infallible>(handle(req, state).await) }
                        });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .keep_alive(true)
                            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                            .await;
                    });
                }
                _ = tokio::signal::ctrl_c() => break Ok(()),
            }
        }
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}

/// An error answer of the proxy's own, shaped as the API's errors are.
fn own_error(
    api: Option<Api>,
    status: StatusCode,
    kind: &str,
    message: &str,
) -> Response<ProxyBody> {
    let body = api.unwrap_or(Api::Messages).error_body(kind, message);
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .header("x-compactor-proxy", "refused")
        .body(ProxyBody::Whole(Some(Bytes::from(body))))
        .expect("a static response builds")
}

/// Whether `host` (a `Host` header) names a loopback address.
fn loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The API a request runs the engine for, if any.
fn engine_route(method: &Method, path: &str) -> Option<Api> {
    match (method, path) {
        (&Method::POST, "/v1/messages") => Some(Api::Messages),
        (&Method::POST, "/v1/responses") => Some(Api::Responses),
        _ => None,
    }
}

/// The upstream a request goes to: the configured one, else the official
/// endpoint of the API it speaks (Anthropic's for Messages paths and
/// requests carrying Anthropic's headers, OpenAI's otherwise).
fn upstream_for(opts: &ServeOptions, path: &str, headers: &HeaderMap) -> Upstream {
    if let Some(u) = &opts.upstream {
        return u.clone();
    }
    let anthropic = path.starts_with("/v1/messages")
        || path.starts_with("/v1/complete")
        || headers.contains_key("anthropic-version")
        || headers.contains_key("x-api-key");
    if anthropic {
        Upstream::anthropic()
    } else {
        Upstream::openai()
    }
}

async fn handle(req: HttpRequest<Incoming>, state: Arc<State>) -> Response<ProxyBody> {
    let api = engine_route(req.method(), req.uri().path());
    if req.method() == Method::CONNECT || req.uri().authority().is_some() {
        return own_error(
            api,
            StatusCode::FORBIDDEN,
            "permission_error",
            "compactor proxy forwards only to its configured upstream; a proxy request for another host was refused",
        );
    }
    if !state.opts.allow_remote {
        let host = req
            .headers()
            .get(hyper::header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if !loopback_host(host) {
            return own_error(
                api,
                StatusCode::FORBIDDEN,
                "permission_error",
                "compactor proxy answers requests addressed to a loopback name (localhost, 127.0.0.1, [::1]) only",
            );
        }
    }
    let (parts, body) = req.into_parts();
    let body = match http_body_util::Limited::new(body, MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            let too_large = e
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some();
            return own_error(
                api,
                if too_large {
                    StatusCode::PAYLOAD_TOO_LARGE
                } else {
                    StatusCode::BAD_REQUEST
                },
                "invalid_request_error",
                &format!("compactor proxy could not read the request body: {e}"),
            );
        }
    };
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let upstream = upstream_for(&state.opts, parts.uri.path(), &parts.headers);
    let url = upstream.url(&path_and_query);
    let encoded = parts.headers.contains_key(hyper::header::CONTENT_ENCODING);
    let Some(api) = api.filter(|_| !encoded) else {
        return forward(state, parts.method, url, parts.headers, body.to_vec(), None).await;
    };
    let session = match api {
        Api::Messages => header(&parts.headers, "x-claude-code-session-id"),
        Api::Responses => {
            header(&parts.headers, "session-id").or_else(|| header(&parts.headers, "thread-id"))
        }
    };
    let parsed = tokio::task::spawn_blocking(move || request::parse(api, body, session.as_deref()))
        .await
        .expect("parsing does not panic");
    let req = match parsed {
        Ok(r) => r,
        Err(bad) => {
            return own_error(
                Some(api),
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                &format!("compactor proxy: the request body is malformed: {bad}"),
            );
        }
    };
    let identity = req.identity.clone();
    let mut prepared = match state.engine.call(req).await {
        Ok(p) => p,
        Err(CallError::Bad(bad)) => {
            return own_error(
                Some(api),
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                &format!("compactor proxy: the request body is malformed: {bad}"),
            );
        }
        Err(e) => {
            (state.events)(ProxyEvent::Note(format!("a call was not forwarded: {e}")));
            return own_error(
                Some(api),
                StatusCode::INTERNAL_SERVER_ERROR,
                "api_error",
                &format!(
                    "compactor proxy could not record this call, so it was not forwarded: {e}"
                ),
            );
        }
    };
    let body = std::mem::take(&mut prepared.body);
    forward(
        state,
        parts.method,
        url,
        parts.headers,
        body,
        Some((api, identity, prepared)),
    )
    .await
}

fn header(h: &HeaderMap, name: &str) -> Option<String> {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// Request headers not passed on: the connection's own, the length (the
/// body may change) and the encodings accepted (the answer must be readable
/// to be recorded).
fn forwarded_request_header(name: &HeaderName) -> bool {
    !matches!(
        name.as_str(),
        "host"
            | "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authorization"
            | "transfer-encoding"
            | "te"
            | "trailer"
            | "upgrade"
            | "content-length"
            | "accept-encoding"
    )
}

/// Answer headers not passed on: the connection's own and the framing
/// (hyper frames the body it sends).
fn forwarded_response_header(name: &HeaderName) -> bool {
    !matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "transfer-encoding"
            | "trailer"
            | "upgrade"
            | "content-length"
    )
}

/// A call the engine prepared: its API, its conversation's identity and
/// what was recorded.
type Engined = (Api, String, Prepared);

/// Send the request upstream and stream its answer back.
async fn forward(
    state: Arc<State>,
    method: Method,
    url: String,
    headers: HeaderMap,
    body: Vec<u8>,
    engined: Option<Engined>,
) -> Response<ProxyBody> {
    let (head_tx, head_rx) = tokio::sync::oneshot::channel();
    let (chunks, rx) = tokio::sync::mpsc::channel(CHUNKS_IN_FLIGHT);
    let st = Arc::clone(&state);
    tokio::task::spawn_blocking(move || {
        upstream_call(&st, method, url, headers, body, engined, head_tx, chunks)
    });
    match head_rx.await {
        Ok(Ok((status, headers, whole))) => {
            let mut resp = Response::builder().status(status);
            for (k, v) in headers.iter() {
                if forwarded_response_header(k) {
                    resp = resp.header(k, v);
                }
            }
            let body = match whole {
                Some(b) => ProxyBody::Whole(Some(b)),
                None => ProxyBody::Stream(rx),
            };
            resp.body(body).unwrap_or_else(|e| {
                own_error(
                    None,
                    StatusCode::BAD_GATEWAY,
                    "api_error",
                    &format!("compactor proxy: the upstream's answer could not be passed on: {e}"),
                )
            })
        }
        Ok(Err((api, message))) => own_error(api, StatusCode::BAD_GATEWAY, "api_error", &message),
        Err(_) => own_error(
            None,
            StatusCode::BAD_GATEWAY,
            "api_error",
            "compactor proxy: the upstream request stopped",
        ),
    }
}

/// The answer's status and headers, and its body when it is passed on
/// whole (an answer that is not a stream is recorded before it is sent).
type Head = (StatusCode, HeaderMap, Option<Bytes>);

/// Assembles an answer of either API.
enum Assembler {
    Messages(super::messages::MessagesAssembler),
    Responses(super::responses::ResponsesAssembler),
}

impl Assembler {
    fn new(api: Api, json: bool) -> Assembler {
        match api {
            Api::Messages => Assembler::Messages(super::messages::MessagesAssembler::new(json)),
            Api::Responses => Assembler::Responses(super::responses::ResponsesAssembler::new(json)),
        }
    }

    fn feed(&mut self, b: &[u8]) {
        match self {
            Assembler::Messages(a) => a.feed(b),
            Assembler::Responses(a) => a.feed(b),
        }
    }

    fn complete(&self) -> bool {
        match self {
            Assembler::Messages(a) => a.complete(),
            Assembler::Responses(a) => a.complete(),
        }
    }

    /// Whether the upstream sent an error event in the stream.
    fn errored(&self) -> bool {
        match self {
            Assembler::Messages(a) => a.errored(),
            Assembler::Responses(a) => a.errored(),
        }
    }

    fn finish(self) -> Result<Message, String> {
        match self {
            Assembler::Messages(a) => a.finish(),
            Assembler::Responses(a) => a.finish(),
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn upstream_call(
    state: &State,
    method: Method,
    url: String,
    headers: HeaderMap,
    body: Vec<u8>,
    engined: Option<Engined>,
    head_tx: tokio::sync::oneshot::Sender<Result<Head, (Option<Api>, String)>>,
    chunks: tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>,
) {
    let mut builder = ureq::http::Request::builder()
        .method(method.as_str())
        .uri(url.as_str());
    for (k, v) in headers.iter() {
        if forwarded_request_header(k) {
            builder = builder.header(k.as_str(), v.as_bytes());
        }
    }
    builder = builder.header("accept-encoding", "identity");
    let api = engined.as_ref().map(|(a, _, _)| *a);
    let sent = builder
        .body(body)
        .map_err(|e| e.to_string())
        .and_then(|r| state.agent.run(r).map_err(|e| e.to_string()));
    let resp = match sent {
        Ok(r) => r,
        Err(e) => {
            let message = format!(
                "compactor proxy cannot reach the upstream {}: {e}",
                origin_of(&url)
            );
            (state.events)(ProxyEvent::Note(message.clone()));
            if let Some(engined) = engined {
                end_call(state, engined, None, None, "upstream_failed");
            }
            let _ = head_tx.send(Err((api, message)));
            return;
        }
    };
    let status = resp.status().as_u16();
    let mut head = HeaderMap::new();
    let decoded = resp
        .headers()
        .get("content-encoding")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("gzip"));
    for (k, v) in resp.headers() {
        // A body ureq decoded is passed on decoded, its length unknown.
        if decoded && matches!(k.as_str(), "content-encoding" | "content-length") {
            continue;
        }
        if let (Ok(k), Ok(v)) = (
            HeaderName::from_bytes(k.as_str().as_bytes()),
            HeaderValue::from_bytes(v.as_bytes()),
        ) {
            head.append(k, v);
        }
    }
    let stream = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("event-stream"));
    let status_code = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut reader = resp.into_body().into_reader();
    let success = (200..300).contains(&status);
    let engined = match engined {
        Some(e) if success => e,
        other => {
            // Passed through as it came (an error answer too, so that the
            // client's own retry and recovery run); nothing is recorded but
            // how an engine call ended.
            let _ = head_tx.send(Ok((status_code, head, None)));
            pump(&mut reader, &chunks, None, None);
            if let Some(engined) = other {
                end_call(state, engined, Some(status), None, "upstream_error");
            }
            return;
        }
    };
    let api = engined.0;
    if !stream {
        // A whole answer: read, recorded, then sent.
        let mut whole = Vec::new();
        let read = reader.read_to_end(&mut whole);
        let mut a = Assembler::new(api, true);
        a.feed(&whole);
        let (answer, outcome) = match read {
            Err(_) => (None, "upstream_failed"),
            Ok(_) => match a.finish() {
                Ok(row) => (Some(row), "recorded"),
                Err(_) => (None, "unparsed"),
            },
        };
        end_call(state, engined, Some(status), answer, outcome);
        let _ = head_tx.send(Ok((status_code, head, Some(Bytes::from(whole)))));
        return;
    }
    let _ = head_tx.send(Ok((status_code, head, None)));
    let n = engined.2.n;
    let mut asm = Some(Assembler::new(api, false));
    let mut engined = Some(engined);
    let mut seen = |chunk: &[u8]| {
        let Some(a) = asm.as_mut() else { return };
        a.feed(chunk);
        if a.complete() {
            // Recorded before the last bytes go out: the client's next
            // request finds its answer in the record.
            let a = asm.take().expect("checked");
            let e = engined.take().expect("ended once");
            let failed = a.errored();
            match a.finish() {
                Ok(row) => end_call(state, e, Some(status), Some(row), "recorded"),
                Err(_) if failed => end_call(state, e, Some(status), None, "upstream_error"),
                Err(_) => end_call(state, e, Some(status), None, "unparsed"),
            }
        }
    };
    let end = pump(&mut reader, &chunks, Some(&mut seen), Some(n));
    if let Some(e) = engined.take() {
        let outcome = match end {
            PumpEnd::ClientGone => "client_gone",
            PumpEnd::UpstreamFailed => "upstream_failed",
            PumpEnd::Done => {
                // The stream ended before its answer did: the client sees
                // an error, not a clean end.
                let _ = chunks.blocking_send(Err(std::io::Error::other(
                    "compactor proxy: the upstream's answer ended before it was complete",
                )));
                "upstream_failed"
            }
        };
        end_call(state, e, Some(status), None, outcome);
    }
}

/// How passing an answer on ended.
enum PumpEnd {
    Done,
    ClientGone,
    UpstreamFailed,
}

/// What is shown each chunk of an answer before it is sent.
type OnChunk<'a> = &'a mut dyn FnMut(&[u8]);

/// Pass the body on chunk by chunk as it arrives; `seen` is shown each
/// chunk before it is sent. `fault`: the forwarded request's number, for
/// the mid-stream fault point (after the first chunk has gone out).
fn pump(
    reader: &mut impl Read,
    chunks: &tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>,
    mut seen: Option<OnChunk<'_>>,
    fault: Option<u64>,
) -> PumpEnd {
    let mut buf = vec![0u8; 64 << 10];
    let mut first = true;
    let mut tail: Vec<u8> = Vec::new();
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return PumpEnd::Done,
            Ok(n) => {
                let chunk = &buf[..n];
                // A chunk that may end the answer is read first (the answer
                // is recorded before the client has it all); any other is
                // sent first, then read, so reading never holds it back.
                let read_first = seen.is_some() && super::sse::may_end(&tail, chunk);
                if read_first && let Some(f) = seen.as_mut() {
                    f(chunk);
                }
                if chunks
                    .blocking_send(Ok(Bytes::copy_from_slice(chunk)))
                    .is_err()
                {
                    return PumpEnd::ClientGone;
                }
                if !read_first && let Some(f) = seen.as_mut() {
                    f(chunk);
                }
                tail.clear();
                tail.extend_from_slice(&chunk[n.saturating_sub(super::sse::END_OVERLAP)..]);
                if first && let Some(k) = fault {
                    mid_stream(chunks, k);
                }
                first = false;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                // The client sees the stream end in an error, not a clean end.
                let _ = chunks.blocking_send(Err(std::io::Error::other(format!(
                    "compactor proxy: the upstream's answer broke off: {e}"
                ))));
                return PumpEnd::UpstreamFailed;
            }
        }
    }
}

/// The mid-stream fault point: once the first chunk has been taken for the
/// client (the channel drained), abort if armed for request `n`.
fn mid_stream(chunks: &tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>, n: u64) {
    if !fault::armed_at(ProxyPoint::MidStream, n) {
        return;
    }
    for _ in 0..1000 {
        if chunks.capacity() == chunks.max_capacity() {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    fault::proxy(ProxyPoint::MidStream, n);
}

/// Record how an engine call ended and report it.
fn end_call(
    state: &State,
    (_, identity, prepared): Engined,
    status: Option<u16>,
    answer: Option<Message>,
    outcome: &'static str,
) {
    let n = prepared.n;
    let outcome = state.engine.ended(
        &identity,
        Ended {
            task: prepared.task.clone(),
            attempt: prepared.attempt,
            rows: prepared.rows,
            status,
            answer,
            outcome,
            n,
        },
    );
    let mut report: ForwardedCall = prepared.report;
    report.upstream_status = status;
    report.outcome = outcome;
    (state.events)(ProxyEvent::Call(report));
}

fn origin_of(url: &str) -> &str {
    let after = url.find("://").map_or(0, |i| i + 3);
    match url[after..].find('/') {
        Some(i) => &url[..after + i],
        None => url,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_are_loopback_hosts() {
        for h in [
            "localhost",
            "localhost:8787",
            "127.0.0.1:9",
            "127.3.4.5",
            "[::1]:8787",
            "[::1]",
        ] {
            assert!(loopback_host(h), "{h}");
        }
        for h in [
            "",
            "evil.example",
            "evil.example:8787",
            "10.0.0.1:80",
            "[fe80::1]:80",
            "localhost.evil.example",
        ] {
            assert!(!loopback_host(h), "{h}");
        }
    }

    #[test]
    fn the_engine_runs_on_the_two_model_call_routes_only() {
        assert_eq!(
            engine_route(&Method::POST, "/v1/messages"),
            Some(Api::Messages)
        );
        assert_eq!(
            engine_route(&Method::POST, "/v1/responses"),
            Some(Api::Responses)
        );
        assert_eq!(
            engine_route(&Method::POST, "/v1/messages/count_tokens"),
            None
        );
        assert_eq!(engine_route(&Method::GET, "/v1/models"), None);
        assert_eq!(
            origin_of("https://api.anthropic.com/v1/messages?beta=true"),
            "https://api.anthropic.com"
        );
    }
}
