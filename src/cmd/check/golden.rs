//! The golden file format: one JSON line per call, each view stored as the messages it shares with the previous one plus the rest.

use super::*;
use crate::cmd::words::plural;

/// One line of a golden file: a call's view as a delta against the previous
/// call's (its first `prefix_messages` messages, then `suffix`), with its hash.
#[derive(Serialize, serde::Deserialize)]
pub(super) struct GoldenLine {
    pub(super) call: u32,
    pub(super) view_hash: String,
    pub(super) prefix_messages: usize,
    pub(super) suffix: Vec<crate::view::ViewMessage>,
}

pub(super) fn golden_path(golden: &Path, fixture: &str, budget: &str) -> PathBuf {
    golden.join(fixture).join(format!("{budget}.jsonl"))
}

pub(super) fn bless(path: &Path, views: &[Vec<u8>]) -> Result<()> {
    let dir = path
        .parent()
        .expect("golden files live in a fixture directory");
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut out = Vec::new();
    let mut prev: Vec<crate::view::ViewMessage> = Vec::new();
    for (i, bytes) in views.iter().enumerate() {
        let view = View::from_json(bytes).context("a replayed view does not parse back")?;
        let shared = view.shared_prefix(&prev);
        let line = GoldenLine {
            call: i as u32 + 1,
            view_hash: view.hash(),
            prefix_messages: shared,
            suffix: view.messages[shared..].to_vec(),
        };
        serde_json::to_writer(&mut out, &line)?;
        out.push(b'\n');
        prev = view.messages;
    }
    crate::cmd::atomic::write_atomic(path, &out, "")
}

pub(super) fn golden_drift(path: &Path, views: &[Vec<u8>]) -> Result<Option<String>> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(Some(format!(
            "no golden file {}; run with --bless to write it",
            path.display()
        )));
    };
    let mut prev: Vec<crate::view::ViewMessage> = Vec::new();
    let mut calls = 0usize;
    for (n, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), n + 1);
        let g: GoldenLine = match serde_json::from_str(line) {
            Ok(g) => g,
            Err(e) => {
                return Ok(Some(format!(
                    "{}: the golden line does not parse ({e})",
                    at()
                )));
            }
        };
        let Some(golden) = View::from_delta(&prev, g.prefix_messages, g.suffix) else {
            return Ok(Some(format!(
                "{}: prefix_messages {} exceeds the previous view",
                at(),
                g.prefix_messages
            )));
        };
        let bytes = golden.canonical_bytes();
        let Some(fresh) = views.get(n) else {
            return Ok(Some(format!(
                "{}: the golden file has more calls than the replay ({})",
                at(),
                views.len()
            )));
        };
        if &bytes != fresh {
            return Ok(Some(format!(
                "call {}: the view differs from the golden file {} {}",
                g.call,
                at(),
                where_differs(&bytes, fresh)
            )));
        }
        if golden.hash() != g.view_hash {
            return Ok(Some(format!(
                "{}: call {}: the golden line's view_hash was edited",
                at(),
                g.call
            )));
        }
        prev = golden.messages;
        calls += 1;
    }
    if calls < views.len() {
        return Ok(Some(format!(
            "the golden file {} has {}, the replay {}",
            path.display(),
            plural(calls, "call"),
            views.len()
        )));
    }
    Ok(None)
}
