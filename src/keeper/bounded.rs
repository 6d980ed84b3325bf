//! Work that a drop or a shutdown hands to a thread of its own and waits for no longer than a
//! bound: a release on a server that stopped answering (SIGSTOP, a hung disk) goes on alone, and
//! the caller's thread, unwinding or not, gets back on time. In the usual case the work is done
//! when the wait returns.
use std::sync::mpsc;
use std::time::Duration;

/// Runs `work` on a thread of its own, named `name`, and waits for it at most `within`: whether
/// it finished by then. Past the bound it goes on alone. A thread that cannot start runs nothing;
/// `work` is then dropped and the answer is `false`. Events `work` emits go to the subscriber of
/// the caller's thread (`tracing` feature).
pub(super) fn finished_within(
    name: &str,
    within: Duration,
    work: impl FnOnce() + Send + 'static,
) -> bool {
    let (done, finished) = mpsc::sync_channel(1);
    #[cfg(feature = "tracing")]
    let subscriber = tracing::dispatcher::get_default(Clone::clone);
    let started = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            #[cfg(feature = "tracing")]
            let _events = tracing::dispatcher::set_default(&subscriber);
            work();
            // The waiter may have gone: nobody is left to tell.
            let _ = done.send(());
        });
    started.is_ok() && finished.recv_timeout(within).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_done_within_the_bound_is_done_when_the_wait_returns() {
        let (sent, received) = mpsc::channel();
        let finished = finished_within("test", Duration::from_secs(60), move || {
            let _ = sent.send(42);
        });
        assert!(finished);
        assert_eq!(received.try_recv(), Ok(42));
    }

    #[test]
    fn work_that_never_ends_is_left_running_and_the_wait_returns() {
        let (release, blocked) = mpsc::channel::<()>();
        let (ended, end) = mpsc::channel();
        let finished = finished_within("test", Duration::from_millis(10), move || {
            let _ = blocked.recv();
            let _ = ended.send(());
        });
        assert!(!finished, "the work was still blocked");
        drop(release);
        assert_eq!(
            end.recv(),
            Ok(()),
            "it went on alone and ended once unblocked"
        );
    }
}
