//! The HTTP side: hyper 1 (HTTP/1.1, keep-alive) on a small tokio runtime
//! takes the client's requests and makes the upstream ones (see
//! [`super::upstream`]); an answer's body is passed on piece by piece as it
//! arrives, through a bounded channel, and to the answer's assembler
//! beside it. Nothing waits on a thread of its own: the threads are the
//! runtime's two, a few for parsing bodies, and the engine's
//! ([`super::engine`]), however many conversations or answers are in
//! flight.
//!
//! Three routes run the engine (`POST /v1/messages`, `POST /v1/responses`,
//! `POST /v1/chat/completions`, that one also without its `/v1`);
//! every other request, and every answer that is not a success, passes
//! through as it came, its body streamed both ways. Answered by the proxy
//! itself, never forwarded: a target not in origin form (`OPTIONS *`, an
//! absolute URL, CONNECT: this is no open proxy), a declared body over the
//! cap (413), and, unless remote clients were allowed, a `Host` that is not
//! a loopback name (a page's DNS rebinding).

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::header::{HeaderMap, HeaderName};
use hyper::{Method, Request as HttpRequest, Response, StatusCode};

use super::engine::{CallError, Ended, Engine, ForwardedCall, Prepared};
use super::request::{self, Api};
use super::sse::Answer;
use super::upstream::{Client, UpBody, UpstreamError};
use super::{ProxyEvent, ProxySettings, ServeOptions, Upstream};
use crate::fault::{self, ProxyPoint};
use crate::model::Message;

/// The runtime's threads (they take the clients' and the upstreams'
/// connections).
const RUNTIME_THREADS: usize = 2;
/// Pieces of an answer in flight between the upstream and the client.
const CHUNKS_IN_FLIGHT: usize = 16;
/// Threads that parse request bodies over LARGE_TRANSFER (and resolve host
/// names).
const BLOCKING_THREADS: usize = 4;
/// How long a thread for parsing bodies waits for more work before it ends.
const BLOCKING_KEEP_ALIVE: Duration = Duration::from_secs(1);
/// A failing accept is reported at most this often.
const ACCEPT_NOTE_EVERY: Duration = Duration::from_secs(10);
/// The longest wait before accepting again after a failed accept.
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// A response body: whole, or pieces as they arrive.
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

    fn size_hint(&self) -> SizeHint {
        match self {
            ProxyBody::Whole(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            ProxyBody::Stream(_) => SizeHint::default(),
        }
    }
}

/// A forwarded body sent as its pieces (runs of the client's body among
/// them, never joined into one buffer), with its exact length, so that it
/// goes upstream with a `content-length` as a whole body would.
struct PiecesBody {
    pieces: std::collections::VecDeque<Bytes>,
    left: u64,
}

impl PiecesBody {
    fn new(pieces: Vec<Bytes>) -> PiecesBody {
        let left = pieces.iter().map(|p| p.len() as u64).sum();
        PiecesBody {
            pieces: pieces.into_iter().filter(|p| !p.is_empty()).collect(),
            left,
        }
    }
}

impl hyper::body::Body for PiecesBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        Poll::Ready(this.pieces.pop_front().map(|p| {
            this.left -= p.len() as u64;
            Ok(Frame::data(p))
        }))
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.left)
    }
}

struct State {
    engine: Engine,
    client: Client,
    opts: ServeOptions,
    events: Arc<dyn Fn(ProxyEvent) + Send + Sync>,
}

impl State {
    fn note(&self, text: String) {
        (self.events)(ProxyEvent::Note(text));
    }
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
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(RUNTIME_THREADS)
        .max_blocking_threads(BLOCKING_THREADS)
        // A thread that parsed a large body (and so allocated its rows)
        // ends soon after: what it allocated and another thread freed goes
        // back to the system only when it collects, which an idle thread
        // never does.
        .thread_keep_alive(BLOCKING_KEEP_ALIVE)
        // Freed memory goes back to the system from each thread that held
        // it, when it goes idle after a large transfer, or ends.
        .on_thread_park(super::release_memory_if_asked)
        .on_thread_stop(super::release_memory)
        .enable_all()
        .thread_name("compactor-proxy")
        .build()?;
    let limits = opts.limits.clone();
    let state = Arc::new(State {
        engine: Engine::new(Arc::new(settings), limits.clone()),
        client: Client::new(limits.connect_timeout, limits.first_byte_timeout),
        opts,
        events,
    });
    let result = runtime.block_on(accept_loop(listener, local, state));
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}

async fn accept_loop(
    listener: std::net::TcpListener,
    local: std::net::SocketAddr,
    state: Arc<State>,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    (state.events)(ProxyEvent::Listening(local));
    let mut stop = std::pin::pin!(tokio::signal::ctrl_c());
    // An idle runtime thread returns freed memory only once it wakes: after
    // a large transfer, each is woken by a task of its own (see
    // `release_memory_if_asked`).
    let mut wake = tokio::time::interval(Duration::from_secs(1));
    wake.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut woken_for = super::release_memory_asked();
    let mut backoff = Duration::ZERO;
    let mut noted: Option<Instant> = None;
    let mut unnoted = 0u64;
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = &mut stop => return Ok(()),
            _ = wake.tick() => {
                let asked = super::release_memory_asked();
                if asked != woken_for {
                    woken_for = asked;
                    for _ in 0..RUNTIME_THREADS {
                        tokio::spawn(async { super::release_memory_if_asked() });
                    }
                }
                continue;
            }
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                backoff = Duration::ZERO;
                stream
            }
            Err(e) => {
                // Out of files (or another passing failure): wait before
                // accepting again, longer each time, and say so at most
                // once per interval rather than once per attempt.
                unnoted += 1;
                if noted.is_none_or(|t| t.elapsed() >= ACCEPT_NOTE_EVERY) {
                    state.note(format!(
                        "accept failed: {e} ({unnoted} time{} since the last note); waiting before accepting again",
                        if unnoted == 1 { "" } else { "s" }
                    ));
                    noted = Some(Instant::now());
                    unnoted = 0;
                }
                backoff = (backoff * 2).clamp(Duration::from_millis(10), ACCEPT_BACKOFF_MAX);
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = &mut stop => return Ok(()),
                }
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
        (&Method::POST, "/v1/chat/completions" | "/chat/completions") => Some(Api::Chat),
        (&Method::POST, p) if super::gemini::route(p).is_some() => Some(Api::Gemini),
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
    let gemini = ["/v1beta/", "/v1alpha/", "/v1/models/", "/upload/v1beta/"]
        .iter()
        .any(|p| path.starts_with(p))
        || headers.contains_key("x-goog-api-key");
    if gemini {
        return Upstream::gemini();
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

/// The proxy's own answer to a request whose target is not a path on this
/// server (origin form): `OPTIONS *` is told what it may ask, an absolute
/// URL or CONNECT is refused, anything else is a bad request. `None`: an
/// origin-form target, to be handled.
fn not_origin_form(req: &HttpRequest<Incoming>, api: Option<Api>) -> Option<Response<ProxyBody>> {
    let uri = req.uri();
    if req.method() == Method::CONNECT || uri.scheme().is_some() || uri.authority().is_some() {
        return Some(own_error(
            api,
            StatusCode::FORBIDDEN,
            "permission_error",
            "compactor proxy forwards only to its configured upstream; a proxy request for another host was refused",
        ));
    }
    if uri.path().starts_with('/') {
        return None;
    }
    if req.method() == Method::OPTIONS && uri.path() == "*" {
        return Some(
            Response::builder()
                .status(StatusCode::NO_CONTENT)
                .header("allow", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
                .header("x-compactor-proxy", "answered")
                .body(ProxyBody::Whole(None))
                .expect("a static response builds"),
        );
    }
    Some(own_error(
        api,
        StatusCode::BAD_REQUEST,
        "invalid_request_error",
        "compactor proxy answers requests for a path (/…) only",
    ))
}

async fn handle(req: HttpRequest<Incoming>, state: Arc<State>) -> Response<ProxyBody> {
    let api = engine_route(req.method(), req.uri().path());
    if let Some(answer) = not_origin_form(&req, api) {
        return answer;
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
    let max = state.opts.limits.max_body;
    let declared = parts
        .headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > max) {
        return too_large(api, max);
    }
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let upstream = upstream_for(&state.opts, parts.uri.path(), &parts.headers);
    let encoded = parts.headers.contains_key(hyper::header::CONTENT_ENCODING);
    let Some(api) = api.filter(|_| !encoded) else {
        // Passed through: the body streamed as it arrives, not read.
        let body = body.map_err(Into::into).boxed();
        return pass_through(state, parts, upstream, &path_and_query, body).await;
    };
    let body = match read_body(body, max, declared).await {
        Ok(b) => b,
        Err(ReadFailed::TooLarge) => return too_large(Some(api), max),
        Err(ReadFailed::Broken(e)) => {
            return own_error(
                Some(api),
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                &format!("compactor proxy could not read the request body: {e}"),
            );
        }
    };
    engine_call(state, parts, upstream, &path_and_query, api, body).await
}

fn too_large(api: Option<Api>, max: u64) -> Response<ProxyBody> {
    own_error(
        api,
        StatusCode::PAYLOAD_TOO_LARGE,
        "request_too_large",
        &format!(
            "compactor proxy takes request bodies up to {} MB (--max-body-mb)",
            max >> 20
        ),
    )
}

enum ReadFailed {
    TooLarge,
    Broken(String),
}

/// A request body read whole, up to `max` bytes, into one buffer of its
/// declared size (no growing copy).
async fn read_body(
    mut body: Incoming,
    max: u64,
    declared: Option<u64>,
) -> Result<Vec<u8>, ReadFailed> {
    let mut out = Vec::with_capacity(declared.unwrap_or(0).min(max) as usize);
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| ReadFailed::Broken(e.to_string()))?;
        if let Ok(data) = frame.into_data() {
            if out.len() as u64 + data.len() as u64 > max {
                return Err(ReadFailed::TooLarge);
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

/// The request sent upstream: the client's method and headers (less the
/// connection's own and, for the engine, the encodings accepted, so that
/// the answer can be read), the upstream's target and `Host`, and `body`.
fn upstream_request(
    parts: &hyper::http::request::Parts,
    upstream: &Upstream,
    path_and_query: &str,
    body: UpBody,
    identity_encoding: bool,
) -> Result<HttpRequest<UpBody>, String> {
    let mut b = HttpRequest::builder()
        .method(parts.method.clone())
        .uri(upstream.target(path_and_query));
    for (k, v) in parts.headers.iter() {
        if forwarded_request_header(k) && !(identity_encoding && k == "accept-encoding") {
            b = b.header(k, v);
        }
    }
    b = b.header(hyper::header::HOST, upstream.authority());
    if identity_encoding {
        b = b.header("accept-encoding", "identity");
    }
    if let Some(auth) = upstream.basic_authorization()
        && !parts.headers.contains_key(hyper::header::AUTHORIZATION)
    {
        b = b.header(hyper::header::AUTHORIZATION, auth);
    }
    b.body(body).map_err(|e| e.to_string())
}

/// Request headers not passed on: the connection's own, the host (the
/// upstream's is set) and the length (the body may change).
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

/// The client's answer head from the upstream's.
fn answer_head(resp: &Response<Incoming>) -> hyper::http::response::Builder {
    let mut b = Response::builder().status(resp.status());
    for (k, v) in resp.headers() {
        if forwarded_response_header(k) {
            b = b.header(k, v);
        }
    }
    b
}

fn is_stream(resp: &Response<Incoming>) -> bool {
    resp.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("event-stream"))
}

fn unreachable_upstream(
    state: &State,
    api: Option<Api>,
    upstream: &Upstream,
    e: &UpstreamError,
) -> Response<ProxyBody> {
    let message = format!(
        "compactor proxy cannot reach the upstream {}: {e}",
        upstream.origin()
    );
    state.note(message.clone());
    let status = match e {
        UpstreamError::FirstByte(_) => StatusCode::GATEWAY_TIMEOUT,
        _ => StatusCode::BAD_GATEWAY,
    };
    own_error(api, status, "api_error", &message)
}

async fn pass_through(
    state: Arc<State>,
    parts: hyper::http::request::Parts,
    upstream: Upstream,
    path_and_query: &str,
    body: UpBody,
) -> Response<ProxyBody> {
    let req = match upstream_request(&parts, &upstream, path_and_query, body, false) {
        Ok(r) => r,
        Err(e) => return own_error(None, StatusCode::BAD_REQUEST, "invalid_request_error", &e),
    };
    let resp = match state.client.send(&upstream, req).await {
        Ok(r) => r,
        Err(e) => return unreachable_upstream(&state, None, &upstream, &e),
    };
    let head = answer_head(&resp);
    let (tx, rx) = tokio::sync::mpsc::channel(CHUNKS_IN_FLIGHT);
    let idle = state.opts.limits.idle_timeout;
    tokio::spawn(async move {
        let mut body = resp.into_body();
        let _ = pump(&mut body, &tx, idle).await;
    });
    head.body(ProxyBody::Stream(rx))
        .unwrap_or_else(|e| own_error(None, StatusCode::BAD_GATEWAY, "api_error", &e.to_string()))
}

/// A forwarded engine call not yet ended: it records how it ended exactly
/// once, when told or, if dropped first (its client went away while it
/// waited), as `client_gone`.
struct Pending {
    state: Arc<State>,
    identity: String,
    prepared: Option<(Prepared, Api)>,
    /// The answer's bytes passed on so far.
    bytes: usize,
}

impl Pending {
    /// Record how the call ended and report it; its outcome.
    async fn end(
        &mut self,
        status: Option<u16>,
        answer: Option<Message>,
        outcome: &'static str,
    ) -> String {
        let Some((prepared, _)) = self.prepared.take() else {
            return outcome.to_string();
        };
        let (ended, report) = ended(prepared, status, answer, outcome, self.bytes);
        let outcome = self.state.engine.ended(&self.identity, ended).await;
        self.report(report, status, outcome.clone());
        outcome
    }

    fn report(&self, mut report: ForwardedCall, status: Option<u16>, outcome: String) {
        report.upstream_status = status;
        report.outcome = outcome;
        (self.state.events)(ProxyEvent::Call(Box::new(report)));
    }

    /// A note on the call's answer, naming the task and call.
    fn note(&self, note: Option<String>) {
        if let (Some(note), Some((p, _))) = (note, &self.prepared) {
            self.state
                .note(format!("{} call {}: {note}", p.report.task, p.report.call));
        }
    }

    fn api(&self) -> Api {
        self.prepared.as_ref().map_or(Api::Messages, |(_, a)| *a)
    }

    fn n(&self) -> u64 {
        self.prepared.as_ref().map_or(0, |(p, _)| p.n)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some((prepared, _)) = self.prepared.take() {
            let (ended, report) = ended(prepared, None, None, "client_gone", self.bytes);
            self.state.engine.ended_later(&self.identity, ended);
            self.report(report, None, "client_gone".into());
        }
    }
}

fn ended(
    p: Prepared,
    status: Option<u16>,
    answer: Option<Message>,
    outcome: &'static str,
    bytes: usize,
) -> (Ended, ForwardedCall) {
    (
        Ended {
            bytes,
            task: p.task,
            attempt: p.attempt,
            rows: p.rows,
            status,
            answer,
            outcome,
            n: p.n,
        },
        p.report,
    )
}

async fn engine_call(
    state: Arc<State>,
    parts: hyper::http::request::Parts,
    upstream: Upstream,
    path_and_query: &str,
    api: Api,
    body: Vec<u8>,
) -> Response<ProxyBody> {
    let session = match api {
        Api::Messages => header(&parts.headers, "x-claude-code-session-id"),
        Api::Responses => {
            header(&parts.headers, "session-id").or_else(|| header(&parts.headers, "thread-id"))
        }
        Api::Chat => header(&parts.headers, "x-session-id")
            .or_else(|| header(&parts.headers, "x-session-affinity"))
            .or_else(|| header(&parts.headers, "session-id")),
        Api::Gemini => None,
    };
    // Gemini names its model in the path; a helper's side call is passed on
    // as it came (see `gemini`).
    let gemini_model = match api {
        Api::Gemini => super::gemini::route(parts.uri.path()).map(|(m, _)| m.to_string()),
        _ => None,
    };
    if api == Api::Gemini
        && parts.uri.path().ends_with(":generateContent")
        && super::gemini::side_call(&body)
    {
        let body = http_body_util::Full::new(Bytes::from(body))
            .map_err(|never| match never {})
            .boxed();
        return pass_through(state, parts, upstream, path_and_query, body).await;
    }
    // A body up to LARGE_TRANSFER parses in well under a millisecond, on
    // the runtime's thread: handing it to a blocking thread and back would
    // cost two wake-ups, which a loaded machine makes the slowest part of
    // the first byte. A larger one is parsed off the runtime.
    let parsed = if body.len() <= super::LARGE_TRANSFER {
        request::parse(api, body, session.as_deref())
    } else {
        tokio::task::spawn_blocking(move || request::parse(api, body, session.as_deref()))
            .await
            .expect("parsing does not panic")
    };
    let mut req = match parsed {
        Ok(r) => r,
        Err(bad) => return malformed(api, &bad.to_string()),
    };
    if gemini_model.is_some() {
        req.model = gemini_model;
    }
    let identity = req.identity.clone();
    let mut prepared = match state.engine.call(req).await {
        Ok(p) => p,
        Err(CallError::Bad(bad)) => return malformed(api, &bad.to_string()),
        Err(e) => {
            state.note(format!("a call was not forwarded: {e}"));
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
    let forwarded = PiecesBody::new(std::mem::take(&mut prepared.body));
    let mut pending = Pending {
        state: Arc::clone(&state),
        identity,
        prepared: Some((prepared, api)),
        bytes: 0,
    };
    let body = forwarded.boxed();
    let req = match upstream_request(&parts, &upstream, path_and_query, body, true) {
        Ok(r) => r,
        Err(e) => {
            pending.end(None, None, "upstream_failed").await;
            return own_error(
                Some(api),
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                &e,
            );
        }
    };
    let resp = match state.client.send(&upstream, req).await {
        Ok(r) => r,
        Err(e) => {
            let answer = unreachable_upstream(&state, Some(api), &upstream, &e);
            pending.end(None, None, "upstream_failed").await;
            return answer;
        }
    };
    let status = resp.status().as_u16();
    let head = answer_head(&resp);
    let idle = state.opts.limits.idle_timeout;
    let (tx, rx) = tokio::sync::mpsc::channel(CHUNKS_IN_FLIGHT);
    if !(200..300).contains(&status) {
        // Passed through as it came (an error answer too, so that the
        // client's own retry and recovery run); nothing is recorded but
        // how the call ended.
        tokio::spawn(async move {
            let mut body = resp.into_body();
            pump(&mut body, &tx, idle).await;
            pending.end(Some(status), None, "upstream_error").await;
        });
        return head
            .body(ProxyBody::Stream(rx))
            .unwrap_or_else(|e| bad_head(api, e));
    }
    if !is_stream(&resp) {
        // A whole answer: read (into one buffer of its declared size, up to
        // the body cap), recorded, then sent.
        let declared = resp
            .headers()
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0)
            .min(state.opts.limits.max_body);
        let mut body = resp.into_body();
        let mut whole = Vec::with_capacity(declared as usize);
        let read = pump_into(&mut body, &mut whole, idle).await;
        pending.bytes = whole.len();
        let (answer, outcome) = match read {
            Err(_) => (None, "upstream_failed"),
            Ok(()) => match Answer::whole(api.assembler(), &whole) {
                Ok((row, note)) => {
                    pending.note(note);
                    (Some(row), "recorded")
                }
                Err(_) => (None, "unparsed"),
            },
        };
        if let Err(e) = read {
            state.note(format!("the upstream's answer broke off: {e}"));
            pending.end(Some(status), None, outcome).await;
            return own_error(
                Some(api),
                StatusCode::BAD_GATEWAY,
                "api_error",
                &format!("compactor proxy: the upstream's answer broke off: {e}"),
            );
        }
        pending.end(Some(status), answer, outcome).await;
        return head
            .body(ProxyBody::Whole(Some(Bytes::from(whole))))
            .unwrap_or_else(|e| bad_head(api, e));
    }
    tokio::spawn(async move {
        stream_answer(pending, resp.into_body(), tx, idle, status).await;
    });
    head.body(ProxyBody::Stream(rx))
        .unwrap_or_else(|e| bad_head(api, e))
}

fn bad_head(api: Api, e: hyper::http::Error) -> Response<ProxyBody> {
    own_error(
        Some(api),
        StatusCode::BAD_GATEWAY,
        "api_error",
        &format!("compactor proxy: the upstream's answer could not be passed on: {e}"),
    )
}

fn malformed(api: Api, why: &str) -> Response<ProxyBody> {
    own_error(
        Some(api),
        StatusCode::BAD_REQUEST,
        "invalid_request_error",
        &format!("compactor proxy: the request body is malformed: {why}"),
    )
}

fn header(h: &HeaderMap, name: &str) -> Option<String> {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// A streamed answer passed on piece by piece while it is assembled; the
/// piece that completes it is held back until the answer is recorded, so
/// the client's next request finds it in the record.
async fn stream_answer(
    mut pending: Pending,
    mut body: Incoming,
    tx: tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>,
    idle: Duration,
    status: u16,
) {
    let n = pending.n();
    let mut answer = Some(Answer::streamed(pending.api().assembler()));
    let mut first = true;
    let mut pieces = Pieces::new(&mut body, &tx, idle);
    let end = loop {
        let data = match pieces.next().await {
            Ok(d) => d,
            Err(end) => break end,
        };
        pending.bytes += data.len();
        if let Some(a) = answer.as_mut() {
            a.feed(&data);
            if a.complete() {
                let a = answer.take().expect("checked");
                pending.note(a.note());
                let failed = a.errored();
                match a.finish() {
                    Ok(row) => pending.end(Some(status), Some(row), "recorded").await,
                    Err(_) if failed => pending.end(Some(status), None, "upstream_error").await,
                    Err(_) => pending.end(Some(status), None, "unparsed").await,
                };
            }
        }
        if tx.send(Ok(data)).await.is_err() {
            break PumpEnd::ClientGone;
        }
        if first {
            first = false;
            mid_stream(&tx, n).await;
        }
    };
    if answer.is_some() {
        let outcome = match end {
            PumpEnd::ClientGone => "client_gone",
            PumpEnd::UpstreamFailed => "upstream_failed",
            PumpEnd::Done if answer.as_mut().is_some_and(|a| a.complete_at_end()) => {
                // Whole all the same (a server that sends no closing event).
                let a = answer.take().expect("checked");
                pending.note(a.note());
                match a.finish() {
                    Ok(row) => pending.end(Some(status), Some(row), "recorded").await,
                    Err(_) => pending.end(Some(status), None, "unparsed").await,
                };
                return;
            }
            PumpEnd::Done => {
                // The stream ended before its answer did: the client sees
                // an error, not a clean end.
                let _ = tx
                    .send(Err(std::io::Error::other(
                        "compactor proxy: the upstream's answer ended before it was complete",
                    )))
                    .await;
                "upstream_failed"
            }
        };
        pending.end(Some(status), None, outcome).await;
    }
}

/// How passing a body on ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PumpEnd {
    Done,
    ClientGone,
    UpstreamFailed,
}

/// A body being passed on: where its pieces come from, where they go, and
/// the idle deadline (moved on at most every `idle / 8`, not at every
/// piece: a stream of small pieces would otherwise spend its time on the
/// timer).
struct Pieces<'a> {
    body: &'a mut Incoming,
    tx: &'a tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>,
    idle: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
    moved: tokio::time::Instant,
}

impl<'a> Pieces<'a> {
    fn new(
        body: &'a mut Incoming,
        tx: &'a tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>,
        idle: Duration,
    ) -> Pieces<'a> {
        let now = tokio::time::Instant::now();
        Pieces {
            body,
            tx,
            idle,
            deadline: Box::pin(tokio::time::sleep_until(now + idle)),
            moved: now,
        }
    }

    /// The next piece, or how the body ended: an upstream silent for
    /// `idle`, or one that breaks off, ends it in an error the client sees
    /// (not a clean end); a client gone ends it at once, whatever the
    /// upstream does.
    async fn next(&mut self) -> Result<Bytes, PumpEnd> {
        loop {
            let next = tokio::select! {
                biased;
                f = self.body.frame() => Some(f),
                _ = self.tx.closed() => return Err(PumpEnd::ClientGone),
                _ = self.deadline.as_mut() => None,
            };
            let why = match next {
                Some(None) => return Err(PumpEnd::Done),
                Some(Some(Ok(frame))) => match frame.into_data() {
                    Ok(d) => {
                        let now = tokio::time::Instant::now();
                        if now.duration_since(self.moved) >= self.idle / 8 {
                            self.deadline.as_mut().reset(now + self.idle);
                            self.moved = now;
                        }
                        return Ok(d);
                    }
                    Err(_) => continue,
                },
                Some(Some(Err(e))) => {
                    format!("compactor proxy: the upstream's answer broke off: {e}")
                }
                None => format!(
                    "compactor proxy: the upstream sent nothing for {} s (--idle-timeout)",
                    self.idle.as_secs()
                ),
            };
            let _ = self.tx.send(Err(std::io::Error::other(why))).await;
            return Err(PumpEnd::UpstreamFailed);
        }
    }
}

/// Pass `body` on piece by piece as it arrives.
async fn pump(
    body: &mut Incoming,
    tx: &tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>,
    idle: Duration,
) -> PumpEnd {
    let mut pieces = Pieces::new(body, tx, idle);
    loop {
        match pieces.next().await {
            Ok(d) => {
                if tx.send(Ok(d)).await.is_err() {
                    return PumpEnd::ClientGone;
                }
            }
            Err(end) => return end,
        }
    }
}

/// Read a whole body into `out`, each piece within `idle` of the last.
async fn pump_into(body: &mut Incoming, out: &mut Vec<u8>, idle: Duration) -> Result<(), String> {
    loop {
        match tokio::time::timeout(idle, body.frame()).await {
            Ok(None) => return Ok(()),
            Ok(Some(Ok(frame))) => {
                if let Ok(d) = frame.into_data() {
                    out.extend_from_slice(&d);
                }
            }
            Ok(Some(Err(e))) => return Err(e.to_string()),
            Err(_) => return Err(format!("nothing for {} s (--idle-timeout)", idle.as_secs())),
        }
    }
}

/// The mid-stream fault point: once the first piece has been taken for the
/// client (the channel drained), abort if armed for request `n`.
async fn mid_stream(tx: &tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>, n: u64) {
    if !fault::armed_at(ProxyPoint::MidStream, n) {
        return;
    }
    for _ in 0..1000 {
        if tx.capacity() == tx.max_capacity() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    fault::proxy(ProxyPoint::MidStream, n);
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
    fn the_engine_runs_on_the_model_call_routes_only() {
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
        for chat in ["/v1/chat/completions", "/chat/completions"] {
            assert_eq!(engine_route(&Method::POST, chat), Some(Api::Chat));
        }
    }
}
