//! Tells the tests which of their prerequisites this machine has: the pinned
//! agent clients (`clients/node_modules/.bin/{claude,codex,opencode,gemini}`, installed by
//! `cd clients && npm ci`) and the shared corpus (`$COMPACTOR_CORPUS`, else
//! `../shared/corpus`), and the `openai` Python SDK a proxy test drives
//! (`pip install -r clients/requirements.txt`) and python3 itself (the
//! stand-in model `scripts/stand-in-model.py`), and a browser for the
//! report page's test (Debian's chromium, or `$CHROMIUM`, with
//! playwright-core from `clients/`). A test that needs one that
//! is absent is compiled as
//! `#[ignore]` (`cfg_attr(not(compactor_clients), ignore = "...")`), so
//! libtest reports it as ignored instead of as passed. Under CI both are
//! always set: the tests are compiled to run, and fail when what they need is
//! missing. Nothing here affects the library or the binary.

use std::path::{Path, PathBuf};

const CLIENTS: [&str; 4] = ["claude", "codex", "opencode", "gemini"];

fn main() {
    println!("cargo::rustc-check-cfg=cfg(compactor_clients)");
    println!("cargo::rustc-check-cfg=cfg(compactor_corpus)");
    println!("cargo::rustc-check-cfg=cfg(compactor_python_sdk)");
    println!("cargo::rustc-check-cfg=cfg(compactor_browser)");
    println!("cargo::rustc-check-cfg=cfg(compactor_python)");
    println!("cargo::rerun-if-env-changed=CHROMIUM");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rerun-if-env-changed=COMPACTOR_CORPUS");
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let ci = std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"));

    let bin = root.join("clients").join("node_modules").join(".bin");
    let clients: Vec<PathBuf> = CLIENTS.iter().map(|c| bin.join(c)).collect();
    if clients.iter().all(|c| c.exists()) {
        clients.iter().for_each(|c| watch(c));
        println!("cargo::rustc-cfg=compactor_clients");
    } else {
        // `npm ci` creates node_modules here: the directory changes.
        watch(&root.join("clients"));
        if ci {
            println!("cargo::rustc-cfg=compactor_clients");
        }
    }

    // The SDK's package directory when it imports, else the directory a
    // `pip install` would put it in (watched, so that installing it counts).
    let python = |code: &str| {
        std::process::Command::new("python3")
            .args(["-c", code])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| PathBuf::from(s.trim()))
    };
    // Python itself (the stand-in model of `scripts/`).
    if python("import sys; print(sys.prefix)").is_some() || ci {
        println!("cargo::rustc-cfg=compactor_python");
    }
    match python("import os, openai; print(os.path.dirname(openai.__file__))") {
        Some(dir) => {
            watch(&dir);
            println!("cargo::rustc-cfg=compactor_python_sdk");
        }
        None => {
            if let Some(site) = python("import sysconfig; print(sysconfig.get_paths()['purelib'])")
                .filter(|d| d.is_dir())
            {
                watch(&site);
            }
            if ci {
                println!("cargo::rustc-cfg=compactor_python_sdk");
            }
        }
    }

    // A real browser for the report page: Debian's chromium (or $CHROMIUM)
    // and playwright-core from clients/ to drive it.
    let chromium = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    let playwright = root
        .join("clients")
        .join("node_modules")
        .join("playwright-core");
    // Installing either changes what is watched: the browser's directory
    // while it is missing (only a flat one such as /usr/bin: cargo scans a
    // watched directory whole), and npm's record of what it installed
    // (rewritten by every `npm ci`) while playwright-core is.
    if chromium.exists() {
        watch(&chromium);
    } else if let Some(dir) = chromium.parent().filter(|d| flat_dir(d)) {
        watch(dir);
    }
    let installed = root
        .join("clients")
        .join("node_modules")
        .join(".package-lock.json");
    if playwright.exists() {
        watch(&playwright);
    } else if installed.exists() {
        watch(&installed);
    }
    if (chromium.exists() && playwright.exists()) || ci {
        println!("cargo::rustc-cfg=compactor_browser");
    }

    let corpus = match std::env::var_os("COMPACTOR_CORPUS") {
        Some(dir) => root.join(dir),
        None => root.join("..").join("shared").join("corpus"),
    };
    if corpus.is_dir() {
        watch(&corpus);
        println!("cargo::rustc-cfg=compactor_corpus");
    } else {
        // The nearest directory that would change when the corpus appears,
        // unless that is one holding this checkout (watching it would scan
        // the checkout, target/ included, on every build).
        let nearest = corpus.ancestors().skip(1).find(|d| d.is_dir());
        let holds_checkout = |d: &Path| match (d.canonicalize(), root.canonicalize()) {
            (Ok(d), Ok(r)) => r.starts_with(d),
            _ => true,
        };
        if let Some(dir) = nearest.filter(|d| !holds_checkout(d)) {
            watch(dir);
        }
        if ci {
            println!("cargo::rustc-cfg=compactor_corpus");
        }
    }
}

/// A directory that holds no directory (and is not the root): cheap for
/// cargo to scan when watched.
fn flat_dir(dir: &Path) -> bool {
    dir.parent().is_some()
        && std::fs::read_dir(dir).is_ok_and(|entries| {
            entries
                .flatten()
                .all(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        })
}

fn watch(path: &Path) {
    println!("cargo::rerun-if-changed={}", path.display());
}
