"""`tichu check-bot`: the conformance and chaos kit for bot authors.

It starts a real referee in this process (plaintext, 127.0.0.1, a free port), stages scripted
positions and deals that reach every decision kind and the hard rules, seats the bot under test
behind a fault-injecting proxy (`tichu bot`, the SDK's connector, runs a MODULE:CLASS bot; any other bot is a
command), plays the other seats itself, and grades what the bot did: each check passed, failed
(with what the bot did and the rule ID) or not reached.

It lives on the referee's side: it runs a referee and speaks the wire, and, like the tournament
runner, it starts a Bot subclass as a `tichu bot` process rather than importing
the SDK (the referee never imports clients).
"""

from referee.checkbot.report import CheckResult, Grade, Report

__all__ = ["CheckResult", "Grade", "Report"]
