//! Progress on standard error while a bundle is read: a spinner with what is being done and
//! the time spent, shown only when reading takes longer than [`DELAY`] and standard error is a
//! terminal, and cleared when the work is done, so a quick run or a redirected one prints
//! nothing.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before the spinner appears.
const DELAY: Duration = Duration::from_secs(1);

/// A spinner that appears after [`DELAY`]; cleared when dropped.
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    done: Option<mpsc::Sender<()>>,
    waiter: Option<JoinHandle<()>>,
}

impl Progress {
    /// A spinner saying `message`, drawn on standard error after [`DELAY`] when `enabled`
    /// (standard error is a terminal and `--quiet` was not given); nothing otherwise.
    pub(crate) fn start(enabled: bool, message: String) -> Self {
        if !enabled {
            return Self {
                bar: None,
                done: None,
                waiter: None,
            };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        let style = ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.set_message(message);
        let (done, wait) = mpsc::channel::<()>();
        let shown = bar.clone();
        // The spinner is drawn only if the work outlasts the delay: the sender is dropped
        // when it ends, which wakes this thread before the timeout.
        let waiter = std::thread::Builder::new()
            .name("pgmortem-progress".to_owned())
            .spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(DELAY) {
                    shown.set_draw_target(ProgressDrawTarget::stderr());
                    shown.enable_steady_tick(Duration::from_millis(120));
                }
            })
            .ok();
        Self {
            bar: Some(bar),
            done: Some(done),
            waiter,
        }
    }

    /// Says what is being done now.
    pub(crate) fn message(&self, message: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(message);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        drop(self.done.take());
        if let Some(waiter) = self.waiter.take() {
            let _ = waiter.join();
        }
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
