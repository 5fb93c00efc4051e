//! Every file a command writes is written whole or not at all.

use std::path::Path;

use anyhow::{Context, Result};

use crate::view::View;

/// Write a view's canonical bytes atomically.
pub fn write_view(path: &Path, view: &View) -> Result<()> {
    write_atomic(path, &view.canonical_bytes(), "the view to ")
}

/// Every file a command writes goes through here: a temp file beside `path`,
/// renamed into place, so a killed command leaves the old file or the new
/// one, never half of one. `what` prefixes the path in the error message.
pub fn write_atomic(path: &Path, bytes: &[u8], what: &str) -> Result<()> {
    write_atomic_as(path, bytes, what, path)
}

/// [`write_atomic`], the file given the mode of `mode_of` (a backup keeps
/// its original's: a private file's copy is as private, never wider, not
/// even for a moment, as the temp file it is written to is 0600).
pub fn write_atomic_as(path: &Path, bytes: &[u8], what: &str, mode_of: &Path) -> Result<()> {
    let fail = || format!("cannot write {what}{}", path.display());
    // A device or a pipe (`-o /dev/null`, `-o /dev/stdout`, a FIFO) is written
    // into: renaming a file over it would replace the device itself.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .with_context(fail)?;
        return std::io::Write::write_all(&mut out, bytes).with_context(fail);
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).with_context(fail)?;
    std::io::Write::write_all(&mut tmp, bytes).with_context(fail)?;
    // A temp file is private (0600); the written file keeps the mode of the
    // one it replaces (or of `mode_of`), else gets the mode of a file
    // written in place (0644).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(mode_of).map_or(0o644, |m| m.permissions().mode() & 0o7777);
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .with_context(fail)?;
    }
    tmp.persist(path).with_context(fail)?;
    Ok(())
}
