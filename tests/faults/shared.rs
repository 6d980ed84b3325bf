//! What several scenarios use, importing nothing of the suite: a lock that outlives a worker
//! thread's panic, and errors told by kind.
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

/// `mutex` locked, even after a thread panicked holding it: the scenario reports what it saw.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The errors, as `kind: count` separated by `; `; "none" when there were none.
pub(crate) fn errors_text(errors: &BTreeMap<String, u64>) -> String {
    if errors.is_empty() {
        return "none".into();
    }
    errors
        .iter()
        .map(|(kind, count)| format!("{kind}: {count}"))
        .collect::<Vec<_>>()
        .join("; ")
}
