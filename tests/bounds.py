"""How long a test waits for a process it started before it calls it hung."""

# A process of accord's that normally ends in seconds: bounded by the test itself, so that a
# hang fails the test instead of holding CI, and generous, so that a busy machine (load 10-13
# on 2 cores, where starting a process alone took 20-40 s) does not fail it.
PROCESS_SECONDS = 300


def as_from_a_terminal() -> None:
    """`preexec_fn` of a process a test interrupts: Ctrl-C and SIGTERM reach it as they reach
    a command typed in a terminal. A test suite started in the background by a shell without
    job control inherits SIGINT ignored, and so would every process it starts."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
