//! The suite of diesel-lease: its integration tests (`tests/`), fault suite (`tests/faults/`),
//! compile-fail cases, examples and benchmark harness are this crate's targets; this library is
//! empty.
