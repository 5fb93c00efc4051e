//! Configuring the summarizer: flags > environment > config file > defaults.
//!
//! The command line resolves a flag and its environment variable (into
//! [`LlmOverrides`]); what neither sets comes from the optional config file (`$COMPACTOR_CONFIG`, else
//! `$XDG_CONFIG_HOME/compactor/config.toml`, else
//! `~/.config/compactor/config.toml`), a flat subset of TOML:
//!
//! ```toml
//! # comments and blank lines are fine
//! summarizer = "llm"
//! llm_provider = "openai"
//! llm_base_url = "http://127.0.0.1:11434/v1"
//! llm_model = "qwen2.5:7b"
//! llm_timeout = 60
//! llm_api_key_env = "OPENAI_API_KEY"
//! llm_fallback = "extractive"
//! llm_price_input = "0.15"
//! llm_price_output = "0.60"
//! ```
//!
//! The API key itself is never configured here: only the name of the
//! environment variable holding it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::ValueEnum;

use crate::model::decimal::{Micros, parse_millionths};

/// The summarizer a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SummarizerKind {
    /// Deterministic, offline: the constitution's sections filled by rules.
    Extractive,
    /// A model over HTTP, validated against the extractive summary and stored before use.
    Llm,
    /// The last ask and an action count.
    Static,
}

/// The wire format of the model server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Provider {
    /// OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp server, Ollama, LM Studio).
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

impl Provider {
    pub fn name(self) -> &'static str {
        match self {
            Provider::Openai => "openai",
            Provider::Anthropic => "anthropic",
        }
    }

    fn default_base_url(self) -> &'static str {
        match self {
            Provider::Openai => "https://api.openai.com/v1",
            Provider::Anthropic => "https://api.anthropic.com",
        }
    }

    fn default_key_env(self) -> &'static str {
        match self {
            Provider::Openai => "OPENAI_API_KEY",
            Provider::Anthropic => "ANTHROPIC_API_KEY",
        }
    }
}

/// What the floor uses when the model fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Fallback {
    Extractive,
    Static,
}

/// What flags or environment variables set for the model summarizer; each
/// unset value comes from the config file, else its default.
#[derive(Debug, Clone, Default)]
pub struct LlmOverrides {
    pub provider: Option<Provider>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub timeout: Option<String>,
    pub api_key_env: Option<String>,
    pub fallback: Option<Fallback>,
    pub price_input: Option<Micros>,
    pub price_output: Option<Micros>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    #[error("cannot read the config file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Syntax {
        path: String,
        line: usize,
        message: String,
    },
    #[error("{0}")]
    Invalid(String),
}

/// A fully resolved model summarizer configuration (no secret in it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmConfig {
    pub provider: Provider,
    /// Without a trailing slash.
    pub base_url: String,
    pub model: String,
    pub timeout: Duration,
    /// The name of the variable the key is read from.
    pub api_key_env: String,
    pub fallback: Fallback,
    pub price_input: Micros,
    pub price_output: Micros,
}

/// The resolved choice of summarizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Choice {
    Extractive,
    Static,
    Llm(LlmConfig),
}

/// The config file's values, by key (all optional).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct FileConfig {
    pub path: String,
    pub values: Vec<(String, String, usize)>,
}

const KEYS: &[&str] = &[
    "summarizer",
    "llm_provider",
    "llm_base_url",
    "llm_model",
    "llm_timeout",
    "llm_api_key_env",
    "llm_fallback",
    "llm_price_input",
    "llm_price_output",
];

impl FileConfig {
    /// The config file's location, if one is configured or exists by default.
    pub(crate) fn default_path() -> Option<PathBuf> {
        let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        if let Some(p) = env("COMPACTOR_CONFIG") {
            return Some(PathBuf::from(p));
        }
        let base = env("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".config")))?;
        Some(base.join("compactor").join("config.toml"))
    }

    /// Load the file at `path`; a missing file is an empty config.
    pub(crate) fn load(path: &Path) -> Result<FileConfig, ConfigError> {
        let shown = path.display().to_string();
        match std::fs::read_to_string(path) {
            Ok(text) => FileConfig::parse(&shown, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FileConfig {
                path: shown,
                values: Vec::new(),
            }),
            Err(source) => Err(ConfigError::Read {
                path: shown,
                source,
            }),
        }
    }

    /// Parse the flat TOML subset: `key = "string"` or `key = 123` / `1.5`,
    /// `#` comments, blank lines. Tables, arrays and unknown keys are refused.
    pub(crate) fn parse(path: &str, text: &str) -> Result<FileConfig, ConfigError> {
        let mut values: Vec<(String, String, usize)> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let err = |message: String| ConfigError::Syntax {
                path: path.to_string(),
                line,
                message,
            };
            let l = raw.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            if l.starts_with('[') {
                return Err(err(
                    "tables are not supported: write the keys at the top level, e.g. llm_model = \"...\"".into(),
                ));
            }
            let Some((key, rest)) = l.split_once('=') else {
                return Err(err("expected `key = value`".into()));
            };
            let key = key.trim();
            if key.contains("api_key") && key != "llm_api_key_env" {
                return Err(err(format!(
                    "`{key}`: secrets are never read from the config file; put the key in an environment variable and name it with llm_api_key_env"
                )));
            }
            if !KEYS.contains(&key) {
                return Err(err(format!(
                    "unknown key `{key}`; expected one of {}",
                    KEYS.join(", ")
                )));
            }
            let rest = rest.trim();
            let value = if let Some(body) = rest.strip_prefix('"') {
                let Some(end) = body.find('"') else {
                    return Err(err("unterminated string: expected a closing `\"`".into()));
                };
                if body[..end].contains('\\') {
                    return Err(err("escapes in strings are not supported".into()));
                }
                let after = body[end + 1..].trim();
                if !(after.is_empty() || after.starts_with('#')) {
                    return Err(err(format!("unexpected `{after}` after the string")));
                }
                body[..end].to_string()
            } else {
                let v = rest.split('#').next().unwrap_or("").trim();
                if v.is_empty() || !v.chars().all(|c| c.is_ascii_digit() || c == '.') {
                    return Err(err(format!(
                        "expected a quoted string or a number for `{key}`, found `{v}`"
                    )));
                }
                v.to_string()
            };
            if values.iter().any(|(k, _, _)| k == key) {
                return Err(err(format!("`{key}` is set twice")));
            }
            values.push((key.to_string(), value, line));
        }
        Ok(FileConfig {
            path: path.to_string(),
            values,
        })
    }

    fn get(&self, key: &str) -> Option<(&str, usize)> {
        self.values
            .iter()
            .find(|(k, _, _)| k == key)
            .map(|(_, v, l)| (v.as_str(), *l))
    }

    /// Parse `key`'s value with `parse`, naming the file and line on error.
    fn typed<T>(
        &self,
        key: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, ConfigError> {
        self.get(key)
            .map(|(v, line)| {
                parse(v).map_err(|message| ConfigError::Syntax {
                    path: self.path.clone(),
                    line,
                    message: format!("`{key}`: {message}"),
                })
            })
            .transpose()
    }
}

fn value_enum<T: ValueEnum>(v: &str) -> Result<T, String> {
    T::from_str(v, false).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|x| x.to_possible_value().map(|p| p.get_name().to_string()))
            .collect();
        format!("`{v}` is not one of {}", names.join(", "))
    })
}

/// `60`, `0.5`: seconds, exactly (no float).
pub(crate) fn parse_seconds(s: &str) -> Result<Duration, String> {
    let micros = parse_millionths(s.trim())
        .map_err(|_| format!("`{s}` is not a number of seconds such as 60 or 0.5"))?;
    if micros == 0 {
        return Err("the timeout must be more than 0 seconds".into());
    }
    Ok(Duration::from_micros(micros))
}

/// Resolve the summarizer from flags/env (`kind`, `args`) and the config file.
pub(crate) fn resolve(
    kind: Option<SummarizerKind>,
    args: &LlmOverrides,
    file: &FileConfig,
) -> Result<Choice, ConfigError> {
    let kind = match kind {
        Some(k) => k,
        None => file
            .typed("summarizer", value_enum::<SummarizerKind>)?
            .unwrap_or(SummarizerKind::Extractive),
    };
    match kind {
        SummarizerKind::Extractive => return Ok(Choice::Extractive),
        SummarizerKind::Static => return Ok(Choice::Static),
        SummarizerKind::Llm => {}
    }
    let provider = match args.provider {
        Some(p) => p,
        None => file
            .typed("llm_provider", value_enum::<Provider>)?
            .unwrap_or(Provider::Openai),
    };
    let string = |flag: &Option<String>, key: &str| -> Option<String> {
        flag.clone()
            .or_else(|| file.get(key).map(|(v, _)| v.to_string()))
    };
    let base_url = string(&args.base_url, "llm_base_url")
        .unwrap_or_else(|| provider.default_base_url().to_string());
    let base_url = base_url.trim_end_matches('/').to_string();
    check_transport(&base_url)?;
    let Some(model) = string(&args.model, "llm_model").filter(|m| !m.trim().is_empty()) else {
        return Err(ConfigError::Invalid(
            "--summarizer llm needs a model: pass --llm-model, set COMPACTOR_LLM_MODEL, or llm_model in the config file".into(),
        ));
    };
    let timeout = match &args.timeout {
        Some(t) => {
            parse_seconds(t).map_err(|e| ConfigError::Invalid(format!("--llm-timeout: {e}")))?
        }
        None => file
            .typed("llm_timeout", parse_seconds)?
            .unwrap_or(Duration::from_secs(60)),
    };
    let api_key_env = string(&args.api_key_env, "llm_api_key_env")
        .unwrap_or_else(|| provider.default_key_env().to_string());
    let fallback = match args.fallback {
        Some(f) => f,
        None => file
            .typed("llm_fallback", value_enum::<Fallback>)?
            .unwrap_or(Fallback::Extractive),
    };
    let price = |flag: Option<Micros>, key: &str| -> Result<Micros, ConfigError> {
        Ok(match flag {
            Some(p) => p,
            None => file
                .typed(key, |v| v.parse::<Micros>())?
                .unwrap_or_default(),
        })
    };
    Ok(Choice::Llm(LlmConfig {
        provider,
        base_url,
        model,
        timeout,
        api_key_env,
        fallback,
        price_input: price(args.price_input, "llm_price_input")?,
        price_output: price(args.price_output, "llm_price_output")?,
    }))
}

/// Plain http only to a loopback host; anything else must be https.
pub(crate) fn check_transport(url: &str) -> Result<(), ConfigError> {
    let (scheme, rest) = url.split_once("://").ok_or_else(|| {
        ConfigError::Invalid(format!(
            "--llm-base-url {url:?} is not a URL; expected e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1"
        ))
    })?;
    let authority = rest.split('/').next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    if host.is_empty() {
        return Err(ConfigError::Invalid(
            "--llm-base-url has no host; expected e.g. http://127.0.0.1:8080/v1".into(),
        ));
    }
    match scheme.to_ascii_lowercase().as_str() {
        "https" => Ok(()),
        "http" if is_loopback(host) => Ok(()),
        "http" => Err(ConfigError::Invalid(format!(
            "plain http is only allowed to a loopback address (localhost, 127.0.0.1, ::1); the model server {host} needs https"
        ))),
        other => Err(ConfigError::Invalid(format!(
            "--llm-base-url scheme {other:?} is not supported; use https (or http to a loopback address)"
        ))),
    }
}

pub(crate) fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llm(args: LlmOverrides, file: &str) -> Result<Choice, ConfigError> {
        resolve(
            Some(SummarizerKind::Llm),
            &args,
            &FileConfig::parse("config.toml", file).unwrap(),
        )
    }

    #[test]
    fn flags_beat_the_file_and_the_file_beats_defaults() {
        let file =
            "# mine\nllm_model = \"from-file\"\nllm_timeout = 5\nllm_provider = \"anthropic\"\n";
        let Choice::Llm(c) = llm(LlmOverrides::default(), file).unwrap() else {
            panic!()
        };
        assert_eq!(c.model, "from-file");
        assert_eq!(c.timeout, Duration::from_secs(5));
        assert_eq!(c.provider, Provider::Anthropic);
        assert_eq!(c.api_key_env, "ANTHROPIC_API_KEY");
        assert_eq!(c.base_url, "https://api.anthropic.com");
        assert_eq!(c.fallback, Fallback::Extractive);
        let args = LlmOverrides {
            model: Some("from-flag".into()),
            timeout: Some("0.25".into()),
            ..LlmOverrides::default()
        };
        let Choice::Llm(c) = llm(args, file).unwrap() else {
            panic!()
        };
        assert_eq!(c.model, "from-flag");
        assert_eq!(c.timeout, Duration::from_millis(250));
    }

    #[test]
    fn the_file_can_choose_the_summarizer_and_defaults_stay_extractive() {
        let none = FileConfig::default();
        assert_eq!(
            resolve(None, &LlmOverrides::default(), &none).unwrap(),
            Choice::Extractive
        );
        let f = FileConfig::parse("c", "summarizer = \"static\"").unwrap();
        assert_eq!(
            resolve(None, &LlmOverrides::default(), &f).unwrap(),
            Choice::Static
        );
        assert_eq!(
            resolve(
                Some(SummarizerKind::Extractive),
                &LlmOverrides::default(),
                &f
            )
            .unwrap(),
            Choice::Extractive
        );
    }

    #[test]
    fn bad_files_name_the_line() {
        let e = FileConfig::parse("c.toml", "\nllm_api_key = \"sk-1\"").unwrap_err();
        assert!(e.to_string().starts_with("c.toml:2: "), "{e}");
        assert!(e.to_string().contains("environment variable"), "{e}");
        assert!(!e.to_string().contains("sk-1"), "{e}");
        let e = FileConfig::parse("c.toml", "[llm]\n").unwrap_err();
        assert!(e.to_string().contains("c.toml:1: tables"), "{e}");
        let e = FileConfig::parse("c.toml", "llm_model = \"x").unwrap_err();
        assert!(e.to_string().contains("unterminated"), "{e}");
        let e = FileConfig::parse("c.toml", "modle = 1").unwrap_err();
        assert!(e.to_string().contains("unknown key `modle`"), "{e}");
        let f = FileConfig::parse("c.toml", "\n\nllm_provider = \"gemini\"").unwrap();
        let e = resolve(Some(SummarizerKind::Llm), &LlmOverrides::default(), &f).unwrap_err();
        assert!(e.to_string().starts_with("c.toml:3: `llm_provider`"), "{e}");
    }

    #[test]
    fn plain_http_only_to_loopback() {
        for ok in [
            "http://127.0.0.1:11434/v1",
            "http://localhost:8080",
            "http://[::1]:9/v1",
            "https://api.example.com/v1",
        ] {
            assert!(check_transport(ok).is_ok(), "{ok}");
        }
        let e = check_transport("http://10.0.0.2:8080/v1").unwrap_err();
        assert!(e.to_string().contains("needs https"), "{e}");
        assert!(check_transport("ftp://x").is_err());
        assert!(check_transport("127.0.0.1").is_err());
    }

    #[test]
    fn a_model_is_required() {
        let e = llm(LlmOverrides::default(), "").unwrap_err();
        assert!(e.to_string().contains("--llm-model"), "{e}");
    }
}
