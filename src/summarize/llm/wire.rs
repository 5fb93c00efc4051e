//! The two wire formats (OpenAI-compatible Chat Completions, Anthropic
//! Messages) over ureq, with a bounded retry on 429 and 5xx.
//!
//! The API key goes into one header and nowhere else: errors are built from
//! status codes and response bodies, and scrubbed of the key besides.

use std::time::Duration;

use serde_json::{Value, json};

use super::config::{LlmConfig, Provider, is_loopback};

/// At most this many HTTP attempts per exchange.
pub(crate) const MAX_ATTEMPTS: u32 = 3;

/// What a model call returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reply {
    pub text: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// HTTP attempts it took (1..=MAX_ATTEMPTS).
    pub attempts: u32,
}

/// Why a model call failed (no secret in it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WireError {
    pub reason: String,
    pub attempts: u32,
}

/// How the client waits between attempts: the real sleep by default, never
/// longer than `max_backoff`.
pub struct Backoff {
    pub max_backoff: Duration,
    pub sleep: Box<dyn Fn(Duration)>,
}

impl Default for Backoff {
    fn default() -> Self {
        // COMPACTOR_LLM_MAX_BACKOFF_MS caps each wait (tests keep it short).
        let max = std::env::var("COMPACTOR_LLM_MAX_BACKOFF_MS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(Duration::from_secs(30), Duration::from_millis);
        Backoff {
            max_backoff: max,
            sleep: Box::new(std::thread::sleep),
        }
    }
}

/// An HTTP client for one configuration.
pub(crate) struct HttpClient {
    agent: ureq::Agent,
    config: LlmConfig,
    key: Option<String>,
    pub backoff: Backoff,
}

impl HttpClient {
    pub(crate) fn new(config: LlmConfig, key: Option<String>) -> HttpClient {
        let host_loopback = host_of(&config.base_url).is_some_and(is_loopback);
        let mut builder = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            // A redirect could carry the key elsewhere: never follow one.
            .max_redirects(0)
            .user_agent(concat!("compactor/", env!("CARGO_PKG_VERSION")));
        if host_loopback {
            builder = builder.proxy(None);
        }
        HttpClient {
            agent: builder.build().into(),
            config,
            key,
            backoff: Backoff::default(),
        }
    }

    fn endpoint(&self) -> String {
        match self.config.provider {
            Provider::Openai => format!("{}/chat/completions", self.config.base_url),
            // Accept the base with or without its `/v1`.
            Provider::Anthropic => format!(
                "{}/v1/messages",
                self.config
                    .base_url
                    .strip_suffix("/v1")
                    .unwrap_or(&self.config.base_url)
            ),
        }
    }

    /// The request body.
    pub(crate) fn body(&self, system: &str, user: &str, max_tokens: u64) -> Value {
        match self.config.provider {
            Provider::Openai => json!({
                "model": self.config.model,
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
                "temperature": 0,
                "max_tokens": max_tokens,
                "stream": false,
            }),
            Provider::Anthropic => json!({
                "model": self.config.model,
                "system": system,
                "messages": [{"role": "user", "content": user}],
                "temperature": 0,
                "max_tokens": max_tokens,
            }),
        }
    }

    /// Send one exchange: up to MAX_ATTEMPTS HTTP attempts, retrying 429 and
    /// 5xx after a backoff (the server's `retry-after` when given).
    pub(crate) fn complete(
        &self,
        system: &str,
        user: &str,
        max_tokens: u64,
    ) -> Result<Reply, WireError> {
        let body = self.body(system, user, max_tokens).to_string();
        let url = self.endpoint();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let fail = |reason: String| WireError {
                reason: self.scrub(reason),
                attempts: attempt,
            };
            let mut req = self
                .agent
                .post(&url)
                .header("content-type", "application/json");
            req = match (self.config.provider, &self.key) {
                (Provider::Openai, Some(k)) => req.header("authorization", format!("Bearer {k}")),
                (Provider::Anthropic, Some(k)) => req.header("x-api-key", k.as_str()),
                (_, None) => req,
            };
            if self.config.provider == Provider::Anthropic {
                req = req.header("anthropic-version", "2023-06-01");
            }
            let mut resp = match req.send(body.as_bytes()) {
                Ok(r) => r,
                Err(e) => return Err(fail(transport_reason(&e, self.config.timeout))),
            };
            let status = resp.status().as_u16();
            let retry_after = resp
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok());
            let text = match resp.body_mut().read_to_string() {
                Ok(t) => t,
                Err(e) => return Err(fail(transport_reason(&e, self.config.timeout))),
            };
            if status == 429 || (500..600).contains(&status) {
                if attempt >= MAX_ATTEMPTS {
                    return Err(fail(format!(
                        "HTTP {status} from the model server after {attempt} attempts: {}",
                        excerpt(&text)
                    )));
                }
                let wait = retry_after.map_or_else(
                    || Duration::from_secs(1 << (attempt - 1)),
                    Duration::from_secs,
                );
                (self.backoff.sleep)(wait.min(self.backoff.max_backoff));
                continue;
            }
            if !(200..300).contains(&status) {
                return Err(fail(format!(
                    "HTTP {status} from the model server: {}",
                    excerpt(&text)
                )));
            }
            return self
                .parse(&text)
                .map(|(text, input_tokens, output_tokens)| Reply {
                    text,
                    input_tokens,
                    output_tokens,
                    attempts: attempt,
                })
                .map_err(fail);
        }
    }

    /// The reply's text and usage.
    fn parse(&self, body: &str) -> Result<(String, u64, u64), String> {
        let v: Value = serde_json::from_str(body).map_err(|e| {
            format!(
                "the model server's reply is not JSON ({e}): {}",
                excerpt(body)
            )
        })?;
        let usage = |a: &str, b: &str| {
            (
                v["usage"][a].as_u64().unwrap_or(0),
                v["usage"][b].as_u64().unwrap_or(0),
            )
        };
        match self.config.provider {
            Provider::Openai => {
                let text = v["choices"][0]["message"]["content"]
                    .as_str()
                    .ok_or_else(|| {
                        format!(
                            "the reply has no choices[0].message.content: {}",
                            excerpt(body)
                        )
                    })?;
                let (i, o) = usage("prompt_tokens", "completion_tokens");
                Ok((text.to_string(), i, o))
            }
            Provider::Anthropic => {
                let blocks = v["content"]
                    .as_array()
                    .ok_or_else(|| format!("the reply has no content array: {}", excerpt(body)))?;
                let text: String = blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .collect();
                let (i, o) = usage("input_tokens", "output_tokens");
                Ok((text, i, o))
            }
        }
    }

    /// Remove the key from any text that could be shown.
    pub(crate) fn scrub(&self, s: String) -> String {
        match &self.key {
            Some(k) if !k.is_empty() && s.contains(k.as_str()) => {
                s.replace(k.as_str(), "[redacted]")
            }
            _ => s,
        }
    }
}

fn host_of(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split('/').next()?;
    let hp = authority.rsplit('@').next()?;
    Some(match hp.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => hp.split(':').next()?,
    })
}

fn transport_reason(e: &ureq::Error, timeout: Duration) -> String {
    match e {
        ureq::Error::Timeout(_) => format!(
            "the model server did not answer within {} ms",
            timeout.as_millis()
        ),
        ureq::Error::ConnectionFailed => "cannot connect to the model server".to_string(),
        ureq::Error::HostNotFound => "the model server's host was not found".to_string(),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            "cannot connect to the model server (connection refused)".to_string()
        }
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => format!(
            "the model server did not answer within {} ms",
            timeout.as_millis()
        ),
        other => format!("the request to the model server failed: {other}"),
    }
}

/// The start of a response body, on one line, for an error message.
fn excerpt(body: &str) -> String {
    let one: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > 200 {
        format!("{}…", one.chars().take(200).collect::<String>())
    } else if one.is_empty() {
        "(empty body)".to_string()
    } else {
        one
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_found() {
        assert_eq!(host_of("http://127.0.0.1:8080/v1"), Some("127.0.0.1"));
        assert_eq!(host_of("http://[::1]:8080"), Some("::1"));
        assert_eq!(host_of("https://u@api.x.com/v1"), Some("api.x.com"));
    }

    /// A one-shot loopback server answering each connection with the next
    /// of `answers` (status, extra header, body).
    fn serve(answers: Vec<(u16, &'static str, String)>) -> String {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for (status, header, body) in answers {
                let (mut s, _) = listener.accept().unwrap();
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut len = 0;
                loop {
                    let mut l = String::new();
                    r.read_line(&mut l).unwrap();
                    if l.trim().is_empty() {
                        break;
                    }
                    if let Some(v) = l.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap();
                    }
                }
                let mut b = vec![0; len];
                r.read_exact(&mut b).unwrap();
                let head = format!(
                    "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n{header}\r\n",
                    body.len()
                );
                s.write_all(head.as_bytes()).unwrap();
                s.write_all(body.as_bytes()).unwrap();
            }
        });
        base
    }

    fn client(base: String) -> (HttpClient, std::rc::Rc<std::cell::RefCell<Vec<Duration>>>) {
        let cfg = LlmConfig {
            provider: Provider::Openai,
            base_url: base,
            model: "m".into(),
            timeout: Duration::from_secs(10),
            api_key_env: "K".into(),
            fallback: super::super::config::Fallback::Extractive,
            price_input: Default::default(),
            price_output: Default::default(),
        };
        let mut c = HttpClient::new(cfg, None);
        let slept = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let rec = slept.clone();
        c.backoff = Backoff {
            max_backoff: Duration::from_secs(60),
            sleep: Box::new(move |d| rec.borrow_mut().push(d)),
        };
        (c, slept)
    }

    const OK: &str = r#"{"choices":[{"message":{"content":"summary"}}],"usage":{"prompt_tokens":3,"completion_tokens":2}}"#;

    #[test]
    fn retry_after_is_honoured_and_backoff_doubles() {
        let base = serve(vec![
            (429, "retry-after: 7\r\n", "slow".into()),
            (200, "", OK.into()),
        ]);
        let (c, slept) = client(base);
        let r = c.complete("s", "u", 10).unwrap();
        assert_eq!(
            (r.text.as_str(), r.input_tokens, r.attempts),
            ("summary", 3, 2)
        );
        assert_eq!(*slept.borrow(), vec![Duration::from_secs(7)]);

        let base = serve(vec![
            (503, "", "a".into()),
            (500, "", "b".into()),
            (502, "", "c".into()),
        ]);
        let (c, slept) = client(base);
        let e = c.complete("s", "u", 10).unwrap_err();
        assert_eq!(e.attempts, MAX_ATTEMPTS);
        assert!(e.reason.starts_with("HTTP 502"), "{}", e.reason);
        assert_eq!(
            *slept.borrow(),
            vec![Duration::from_secs(1), Duration::from_secs(2)]
        );
    }

    #[test]
    fn waits_are_capped() {
        let base = serve(vec![
            (429, "retry-after: 3600\r\n", "".into()),
            (200, "", OK.into()),
        ]);
        let (mut c, slept) = client(base);
        c.backoff.max_backoff = Duration::from_millis(5);
        c.complete("s", "u", 10).unwrap();
        assert_eq!(*slept.borrow(), vec![Duration::from_millis(5)]);
    }

    #[test]
    fn endpoints_follow_the_provider() {
        let (c, _) = client("http://127.0.0.1:9/v1".into());
        assert_eq!(c.endpoint(), "http://127.0.0.1:9/v1/chat/completions");
        let mut cfg = c.config.clone();
        cfg.provider = Provider::Anthropic;
        for base in ["https://api.anthropic.com", "https://api.anthropic.com/v1"] {
            cfg.base_url = base.into();
            let c = HttpClient::new(cfg.clone(), None);
            assert_eq!(c.endpoint(), "https://api.anthropic.com/v1/messages");
        }
    }

    #[test]
    fn the_key_is_scrubbed_from_errors() {
        let cfg = LlmConfig {
            provider: Provider::Openai,
            base_url: "http://127.0.0.1:1".into(),
            model: "m".into(),
            timeout: Duration::from_secs(1),
            api_key_env: "K".into(),
            fallback: super::super::config::Fallback::Extractive,
            price_input: Default::default(),
            price_output: Default::default(),
        };
        let c = HttpClient::new(cfg, Some("sk-secret".into()));
        assert_eq!(c.scrub("bad key sk-secret".into()), "bad key [redacted]");
    }
}
