//! Progress bars on stderr.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::Ui;

/// A progress bar on stderr, drawn only when stderr is a terminal, the user
/// did not ask for quiet, and the work is `worth_it`.
pub fn progress(ui: &Ui, worth_it: bool, len: u64, template: &str) -> Option<ProgressBar> {
    (ui.stderr_terminal && !ui.quiet && worth_it).then(|| {
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        bar.set_style(ProgressStyle::with_template(template).expect("valid template"));
        bar
    })
}
