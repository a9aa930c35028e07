"""How long a test waits for a process it started before it calls it hung."""

# A process of accord's that normally ends in seconds: bounded by the test itself, so that a
# hang fails the test instead of holding CI, and generous, so that a busy machine (load 10-13
# on 2 cores, where starting a process alone took 20-40 s) does not fail it.
PROCESS_SECONDS = 300
