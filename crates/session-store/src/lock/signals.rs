//! Opt-in removal of held lock files on termination signals.

use std::io;

/// Installs (once per process; later calls do nothing) handling of SIGINT, SIGTERM, SIGQUIT and
/// SIGABRT that removes every lock file this process holds ([`super::release_all_held_locks`])
/// and the temporary file of every streaming write still under way
/// ([`crate::io::remove_pending_temp_files`]: the target keeps what it held), and then lets the signal's default action happen: the handler is reset to the default and
/// the signal raised again, so the process dies of it (exit status `128 + signal` in a shell),
/// as with OpenClaw's cleanup.
///
/// Opt-in because a library must not take signals behind the application's back: an application
/// with its own graceful shutdown should call [`super::release_all_held_locks`] from it instead.
/// Uses `signal-hook`; the cleanup runs on a helper thread named `session-write-lock-signals`, so
/// a SIGABRT raised by `abort()` inside the process itself may terminate it first. A no-op off
/// Unix.
///
/// # Errors
/// Registering the handlers or starting the thread failed.
pub fn install_signal_cleanup() -> io::Result<()> {
    imp::install()
}

#[cfg(unix)]
mod imp {
    use std::io;

    use parking_lot::Mutex;
    use signal_hook::consts::{SIGABRT, SIGINT, SIGQUIT, SIGTERM};
    use signal_hook::iterator::Signals;

    static INSTALLED: Mutex<bool> = Mutex::new(false);

    pub(super) fn install() -> io::Result<()> {
        let mut installed = INSTALLED.lock();
        if *installed {
            return Ok(());
        }
        let mut signals = Signals::new([SIGINT, SIGTERM, SIGQUIT, SIGABRT])?;
        let handle = signals.handle();
        let spawned = std::thread::Builder::new()
            .name("session-write-lock-signals".to_owned())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    let released = super::super::release_all_held_locks();
                    let removed = crate::io::remove_pending_temp_files();
                    tracing::debug!(
                        signal,
                        released,
                        removed,
                        "session write locks released and temporary files removed on signal"
                    );
                    // Resets the default action and raises the signal again.
                    if let Err(e) = signal_hook::low_level::emulate_default_handler(signal) {
                        tracing::warn!("[session-write-lock] cannot re-raise signal {signal}: {e}");
                    }
                }
            });
        if let Err(e) = spawned {
            handle.close();
            return Err(e);
        }
        *installed = true;
        Ok(())
    }
}

#[cfg(not(unix))]
mod imp {
    pub(super) fn install() -> std::io::Result<()> {
        Ok(())
    }
}
