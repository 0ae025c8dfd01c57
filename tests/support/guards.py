"""How long a test waits for something that must happen before it calls it a hang.

Tests assert what happens, never how long it took; a wait that goes on past this guard
is not slow but stuck (a lost event, a dead peer), and the test fails there, saying
which wait, rather than holding the suite forever."""

HANG_GUARD_SECONDS = 300.0
"""How long a wait may go on before it is taken for a hang: far beyond any real wait."""
