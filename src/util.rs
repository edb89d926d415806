//! Small helpers the layers share, in the lowest layer so that every layer may use them.

/// Run `side` on a second thread while this one runs `main`, when `worth_it` (the side work is
/// large); otherwise both here, `main` first. Waking a thread on an idle core of a virtual machine
/// can take milliseconds, more than a small program's side work.
pub(crate) fn join_if<M, S>(worth_it: bool, main: impl FnOnce() -> M, side: impl FnOnce() -> S + Send) -> (M, S)
where
    S: Send,
{
    if !worth_it {
        let m = main();
        return (m, side());
    }
    std::thread::scope(|scope| {
        let side = scope.spawn(side);
        let m = main();
        (m, side.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    })
}

/// The text of a caught panic's payload (`panic!` gives a `&str` or a `String`).
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message")
}
