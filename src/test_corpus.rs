//! The shared corpus for the library's tests that read it.

use std::path::{Path, PathBuf};

/// The shared corpus (`$COMPACTOR_CORPUS`, else `../shared/corpus`), or
/// `None` after saying the test is skipped; under CI (`CI=true`) an absent
/// corpus fails the test instead.
pub(crate) fn corpus(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("COMPACTOR_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    if dir.is_dir() {
        return Some(dir);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"));
    assert!(
        !ci,
        "{test}: the corpus is absent ({} is not a directory) and CI is set; set COMPACTOR_CORPUS",
        dir.display()
    );
    eprintln!(
        "SKIPPED {test}: the corpus is absent ({} is not a directory; set COMPACTOR_CORPUS to point at it)",
        dir.display()
    );
    None
}
