//! A model call's request read for the proxy, whichever API it speaks: the
//! body's fields as sent, its conversation items as sent (normalised only
//! when they are new or changed), the system prompt, and what identifies
//! the conversation.

use std::cell::RefCell;
use std::ops::Range;

use serde_json::Value;

use super::body::{BodyFields, ConversationField};
use super::convo::{BadRequest, EntrySide, ItemSpan, entry_digest};
use super::pieces::{Pieces, Text};
use super::sse::Assemble;
use super::{chat, gemini, messages, responses};
use crate::model::{Block, Message};

/// The API a model call speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    /// Anthropic Messages, `POST /v1/messages` (Claude Code).
    Messages,
    /// OpenAI Responses, `POST /v1/responses` (Codex).
    Responses,
    /// OpenAI Chat Completions, `POST /v1/chat/completions` (OpenCode, and
    /// every OpenAI-compatible client).
    Chat,
    /// Gemini, `POST /v1beta/models/M:streamGenerateContent` and
    /// `…:generateContent` (Gemini CLI).
    Gemini,
}

impl Api {
    /// The name `proxy_conversation.api` stores.
    pub fn name(self) -> &'static str {
        match self {
            Api::Messages => "messages",
            Api::Responses => "responses",
            Api::Chat => "chat",
            Api::Gemini => "gemini",
        }
    }

    /// The format its tasks are recorded as (the importer whose
    /// normalisation the rows follow).
    pub(crate) fn format(self) -> crate::model::Format {
        match self {
            Api::Messages => crate::model::Format::Anthropic,
            Api::Responses => crate::model::Format::Codex,
            Api::Chat => crate::model::Format::OpenaiChat,
            Api::Gemini => crate::model::Format::GeminiCli,
        }
    }

    /// The field of the body that holds the conversation.
    pub(crate) fn conversation_field(self) -> &'static str {
        match self {
            Api::Messages | Api::Chat => "messages",
            Api::Responses => "input",
            Api::Gemini => "contents",
        }
    }

    /// A new assembler of this API's answers.
    pub(crate) fn assembler(self) -> Box<dyn Assemble> {
        match self {
            Api::Messages => Box::<messages::MessagesAssembler>::default(),
            Api::Responses => Box::<responses::ResponsesAssembler>::default(),
            Api::Chat => Box::<chat::ChatAssembler>::default(),
            Api::Gemini => Box::<gemini::GeminiAssembler>::default(),
        }
    }

    /// Item `i` of a request (its exact text) as the record's rows.
    pub(crate) fn item_rows(
        self,
        raw: &str,
        i: usize,
        bare_string: bool,
    ) -> Result<Vec<Message>, BadRequest> {
        match self {
            Api::Messages => messages::message_rows(raw, i),
            Api::Responses if bare_string => responses::string_input_rows(raw),
            Api::Responses => responses::item_rows(raw, i),
            Api::Chat => chat::message_rows(raw, i),
            Api::Gemini => gemini::content_rows(raw, i),
        }
    }
}

/// A request read for the proxy.
pub(crate) struct Request {
    pub api: Api,
    /// The body as sent (UTF-8, checked once when read).
    pub body: String,
    /// The body's top-level fields, in order, each by its span in `body`.
    pub fields: Vec<(String, Range<usize>)>,
    pub items: Vec<ItemSpan>,
    /// `input` is a bare string (one user message), not a list of items:
    /// its JSON text, the one item.
    pub bare: Option<String>,
    /// Whether `bare` is set.
    pub bare_string: bool,
    /// The system prompt, normalised (Messages `system`, Responses `instructions`).
    pub system: Vec<Block>,
    pub tools: Option<Value>,
    pub session: Option<String>,
    pub model: Option<String>,
    /// Breakpoints `system` and `tools` carry (Messages).
    pub head_breakpoints: usize,
    /// The breakpoint the client put on its last message (Messages).
    pub message_breakpoint: Option<Value>,
    /// The conversation's lineage and identity (see [`identify`]).
    pub lineage: String,
    pub identity: String,
    /// Rows of items read and not yet taken (item index → rows): the first
    /// items, read to identify the conversation, and the items a plan found
    /// new, which its record takes; so that no item is read twice, nor its
    /// rows copied.
    read: RefCell<Vec<(usize, Vec<Message>)>>,
    /// How many leading items identify the conversation.
    identifying: usize,
    /// The proxy's count of forwarded requests when this one came in (its
    /// fault points count them).
    pub n: u64,
}

impl Request {
    pub(crate) fn text(&self) -> &str {
        &self.body
    }

    pub(crate) fn item_text(&self, i: usize) -> &str {
        match &self.bare {
            Some(text) => text,
            None => &self.text()[self.items[i].span.clone()],
        }
    }

    /// `f` of item `i` as the record's rows: read from its text unless they
    /// were read before and not taken; kept for a later [`Request::take_rows`]
    /// when `keep`.
    pub(crate) fn with_rows<T>(
        &self,
        i: usize,
        keep: bool,
        f: impl FnOnce(&[Message]) -> T,
    ) -> Result<T, BadRequest> {
        if let Some((_, rows)) = self.read.borrow().iter().find(|(j, _)| *j == i) {
            return Ok(f(rows));
        }
        let rows = self.api.item_rows(self.item_text(i), i, self.bare_string)?;
        let out = f(&rows);
        if keep {
            self.read.borrow_mut().push((i, rows));
        }
        Ok(out)
    }

    /// Item `i` as the record's rows, taken (not copied) when they were
    /// read before.
    pub(crate) fn take_rows(&self, i: usize) -> Result<Vec<Message>, BadRequest> {
        let mut read = self.read.borrow_mut();
        match read.iter().position(|(j, _)| *j == i) {
            Some(at) => Ok(read.swap_remove(at).1),
            None => {
                drop(read);
                self.api.item_rows(self.item_text(i), i, self.bare_string)
            }
        }
    }

    /// `f` of the rows of the first items, those read to identify the
    /// conversation (up to its first user item), in order.
    pub(crate) fn with_identifying_rows<T>(
        &self,
        f: impl FnOnce(&mut dyn Iterator<Item = &Message>) -> T,
    ) -> T {
        let mut read = self.read.borrow_mut();
        read.sort_by_key(|(i, _)| *i);
        let mut rows = read
            .iter()
            .take_while(|(i, _)| *i < self.identifying)
            .flat_map(|(_, rows)| rows);
        f(&mut rows)
    }

    /// Item `i` as the forwarded body may carry it: a run of the body, or
    /// (a bare string `input`) its own copy.
    pub(crate) fn item_piece(&self, i: usize) -> Text {
        match &self.bare {
            Some(text) => Text::own(text.clone()),
            None => Text::Body(self.items[i].span.clone()),
        }
    }

    /// The body with the conversation field replaced by what `with` writes
    /// (every other field a run of the body, as sent), and what `with`
    /// returned.
    pub(crate) fn forwarded<T>(&self, with: impl FnOnce(&mut Pieces) -> T) -> (Pieces, T) {
        let text = self.text();
        let field = self.api.conversation_field();
        let mut out = Pieces::default();
        let mut with = Some(with);
        let mut made = None;
        out.char('{');
        for (i, (k, span)) in self.fields.iter().enumerate() {
            if i > 0 {
                out.char(',');
            }
            out.str(&serde_json::to_string(k).expect("a string serialises"));
            out.char(':');
            if k == field
                && let Some(write) = with.take()
            {
                made = Some(write(&mut out));
            } else {
                out.text(&Text::Body(span.clone()), text);
            }
        }
        out.char('}');
        let made = made.expect("the conversation field is among the fields");
        (out, made)
    }
}

/// Read a model call's body. `session_header`: the session id the client
/// sent as a header, if any.
pub(crate) fn parse(
    api: Api,
    body: Vec<u8>,
    session_header: Option<&str>,
) -> Result<Request, BadRequest> {
    let field = api.conversation_field();
    let fields = BodyFields::parse(&body, field).map_err(BadRequest)?;
    let text = std::str::from_utf8(&body).expect("BodyFields::parse checked UTF-8");
    let span = |raw: &serde_json::value::RawValue| {
        let start = raw.get().as_ptr() as usize - text.as_ptr() as usize;
        start..start + raw.get().len()
    };
    let what = match api {
        Api::Messages | Api::Chat => "a list of messages",
        Api::Responses => "a list of input items",
        Api::Gemini => "a list of contents",
    };
    let (items, bare) = match &fields.conversation {
        None => {
            return Err(BadRequest(format!(
                "the body has no \"{field}\"; expected the conversation in \"{field}\""
            )));
        }
        Some(ConversationField::Items(list)) => (
            list.iter().map(|m| ItemSpan::of(text, m.get())).collect(),
            None,
        ),
        Some(ConversationField::Text(t)) if api == Api::Responses => {
            (vec![ItemSpan { span: 0..0 }], Some(t.clone()))
        }
        Some(ConversationField::Text(_)) => {
            return Err(BadRequest(format!(
                "\"{field}\" is a string; expected {what}"
            )));
        }
        Some(ConversationField::Other(kind)) => {
            return Err(BadRequest(format!(
                "\"{field}\" is {kind}; expected {what}"
            )));
        }
    };
    let bare_string = bare.is_some();
    let system = match api {
        Api::Messages => messages::system_blocks(fields.value::<Value>("system"))?,
        Api::Responses => match fields.value::<Value>("instructions") {
            Some(Value::String(s)) if !s.is_empty() => vec![Block::Text { text: s }],
            _ => Vec::new(),
        },
        // Its system prompt is its leading `system` messages (items).
        Api::Chat => Vec::new(),
        Api::Gemini => gemini::system_blocks(fields.value::<Value>("systemInstruction")),
    };
    let tools = fields.value::<Value>("tools").filter(|t| !t.is_null());
    let metadata = fields.value::<Value>("metadata");
    let session = match api {
        Api::Messages => messages::session_of(session_header, metadata.as_ref()),
        Api::Responses => session_header
            .filter(|h| !h.is_empty())
            .map(str::to_string)
            .or_else(|| fields.value::<String>("prompt_cache_key")),
        Api::Chat => chat::session_of(
            session_header,
            fields.value::<String>("prompt_cache_key"),
            fields.value::<String>("user"),
        ),
        Api::Gemini => session_header.filter(|h| !h.is_empty()).map(str::to_string),
    };
    let (head_breakpoints, message_breakpoint) = match api {
        Api::Messages => (
            messages::breakpoints_in(fields.value::<Value>("system").as_ref())
                + messages::breakpoints_in(tools.as_ref()),
            // Claude Code puts it on the last message; only the last few
            // are read (a request without one must not cost a parse of all).
            items
                .iter()
                .rev()
                .take(4)
                .find_map(|it| messages::message_breakpoint(&text[it.span.clone()])),
        ),
        Api::Responses | Api::Chat | Api::Gemini => (0, None),
    };
    let mut req = Request {
        api,
        fields: fields
            .fields
            .iter()
            .map(|(k, v)| (k.clone(), v.map_or(0..0, span)))
            .collect(),
        items,
        bare,
        bare_string,
        system,
        tools,
        session,
        model: fields.value::<String>("model"),
        head_breakpoints,
        message_breakpoint,
        lineage: String::new(),
        identity: String::new(),
        read: RefCell::default(),
        identifying: 0,
        n: 0,
        body: String::new(),
    };
    drop(fields);
    req.body = String::from_utf8(body).expect("BodyFields::parse checked UTF-8");
    identify(&mut req)?;
    Ok(req)
}

/// A conversation's lineage is its API, session and system prompt (with
/// the instructions sent as messages before its first user item); its
/// identity adds that first user item. A client that compacts or clears
/// its context keeps the lineage and starts a new identity.
fn identify(req: &mut Request) -> Result<(), BadRequest> {
    let mut h = blake3::Hasher::new();
    let field = |h: &mut blake3::Hasher, s: &str| {
        h.update(&(s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    field(&mut h, req.api.name());
    field(&mut h, req.session.as_deref().unwrap_or(""));
    field(
        &mut h,
        &serde_json::to_string(&req.system).expect("blocks serialise"),
    );
    let mut first_user: Option<Vec<String>> = None;
    for i in 0..req.items.len() {
        let (user, entries) = req.with_rows(i, true, |rows| {
            let user = rows.iter().any(|r| EntrySide::of(r) != EntrySide::System);
            let entries: Vec<String> = rows
                .iter()
                .flat_map(|r| {
                    let side = EntrySide::of(r);
                    r.content.iter().map(move |b| {
                        let d = entry_digest(side, b);
                        format!("{:016x}{:016x}", d.0[0], d.0[1])
                    })
                })
                .collect();
            (user, entries)
        })?;
        req.identifying = i + 1;
        if user {
            first_user = Some(entries);
            break;
        }
        for e in entries {
            field(&mut h, &e);
        }
    }
    let lineage = h.finalize();
    req.lineage = lineage.to_hex().to_string();
    let mut h = blake3::Hasher::new();
    h.update(lineage.as_bytes());
    for e in first_user.iter().flatten() {
        h.update(e.as_bytes());
    }
    req.identity = h.finalize().to_hex().to_string();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(api: Api, body: &str, session: Option<&str>) -> Request {
        parse(api, body.as_bytes().to_vec(), session).unwrap()
    }

    #[test]
    fn the_identity_is_the_session_system_prompt_and_first_message() {
        let a = r#"{"model":"m","system":"S","messages":[{"role":"user","content":"go"}],"stream":true}"#;
        let longer = r#"{"model":"m","system":"S","messages":[{"role":"user","content":[{"type":"text","text":"go","cache_control":{"type":"ephemeral"}}]},{"role":"assistant","content":"ok"}]}"#;
        let other_ask =
            r#"{"model":"m","system":"S","messages":[{"role":"user","content":"stop"}]}"#;
        let other_system =
            r#"{"model":"m","system":"T","messages":[{"role":"user","content":"go"}]}"#;
        let r = req(Api::Messages, a, Some("s1"));
        assert_eq!(r.items.len(), 1);
        let same = req(Api::Messages, longer, Some("s1"));
        assert_eq!(same.identity, r.identity);
        let ask = req(Api::Messages, other_ask, Some("s1"));
        assert_ne!(ask.identity, r.identity);
        assert_eq!(ask.lineage, r.lineage);
        let sys = req(Api::Messages, other_system, Some("s1"));
        assert_ne!(sys.lineage, r.lineage);
        let session = req(Api::Messages, a, Some("s2"));
        assert_ne!(session.identity, r.identity);
        assert_eq!(r.message_breakpoint, None);
        let bp = req(
            Api::Messages,
            r#"{"messages":[{"role":"user","content":[{"type":"text","text":"go","cache_control":{"type":"ephemeral","ttl":"1h"}}]}]}"#,
            None,
        );
        assert_eq!(
            bp.message_breakpoint,
            Some(serde_json::json!({"type":"ephemeral","ttl":"1h"}))
        );
    }

    #[test]
    fn a_chat_conversation_is_its_session_system_messages_and_first_ask() {
        let body = |system: &str, ask: &str, user: &str| {
            format!(
                r#"{{"model":"m","messages":[{{"role":"system","content":"{system}"}},{{"role":"user","content":"{ask}"}}],"user":"{user}","stream":true}}"#
            )
        };
        let r = req(Api::Chat, &body("S", "go", "u1"), Some("ses_1"));
        assert_eq!(r.session.as_deref(), Some("ses_1"));
        assert_eq!(r.items.len(), 2);
        assert!(
            r.system.is_empty(),
            "its system prompt is its system messages"
        );
        // The header names the session; without it, `user` does.
        assert_eq!(
            req(Api::Chat, &body("S", "go", "u2"), Some("ses_1")).identity,
            r.identity
        );
        let by_user = req(Api::Chat, &body("S", "go", "u1"), None);
        assert_eq!(by_user.session.as_deref(), Some("u1"));
        assert_ne!(by_user.identity, r.identity);
        // A side request: another system prompt, another lineage.
        let side = req(
            Api::Chat,
            &body("You are a title generator.", "go", "u1"),
            Some("ses_1"),
        );
        assert_ne!(side.lineage, r.lineage);
        // The history started anew: the same lineage, another identity.
        let anew = req(
            Api::Chat,
            &body("S", "What did we do so far?", "u1"),
            Some("ses_1"),
        );
        assert_eq!(anew.lineage, r.lineage);
        assert_ne!(anew.identity, r.identity);
        let e = parse(Api::Chat, br#"{"messages":"hi"}"#.to_vec(), None)
            .err()
            .unwrap();
        assert!(e.0.contains("expected a list of messages"), "{e}");
    }

    #[test]
    fn only_the_conversation_field_is_replaced() {
        let body = r#"{"model":"gpt","input":[{"type":"message","role":"user","content":"hi"}],"store":false,"client_metadata":{"x":"y"}}"#;
        let r = req(Api::Responses, body, None);
        assert_eq!(r.items.len(), 1);
        assert_eq!(
            r.item_text(0),
            r#"{"type":"message","role":"user","content":"hi"}"#
        );
        let (out, ()) = r.forwarded(|out| out.str("[]"));
        let out = out.into_bytes(&bytes::Bytes::from(r.body.clone())).concat();
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"{"model":"gpt","input":[],"store":false,"client_metadata":{"x":"y"}}"#
        );
    }

    #[test]
    fn a_body_without_its_conversation_is_a_bad_request() {
        let e = parse(Api::Messages, b"{\"model\":\"m\"}".to_vec(), None)
            .err()
            .unwrap();
        assert!(e.0.contains("no \"messages\""), "{e}");
        let e = parse(Api::Messages, b"{\"messages\":3}".to_vec(), None)
            .err()
            .unwrap();
        assert!(
            e.0.contains("\"messages\" is a number; expected a list of messages"),
            "{e}"
        );
        let e = parse(Api::Responses, b"not json".to_vec(), None)
            .err()
            .unwrap();
        assert!(e.0.contains("not a JSON object"), "{e}");
    }
}
