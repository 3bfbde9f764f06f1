"""`restify serve` delivers the outbox: a reset asked of a running service arrives at a real SMTP server,
sent by one of its processes; `restify mail:failed` reads the same outbox."""
import re

from tests.processes import REQUEST_WAIT, ROOT, Server, register, request, restify
from tests.smtp import SmtpServer


def test_serve_sends_the_mail_a_request_queued(database_env, tmp_path):
    smtp = SmtpServer().start()
    env = {**database_env, "RESTIFY_MAIL_URL": smtp.url, "RESTIFY_MAIL_FROM": "Demo <demo@example.com>"}
    server = Server(ROOT, env, "--processes", "2", log_dir=tmp_path)
    try:
        register(server.port, email="ann@example.com")
        assert request(server.port, "POST", "/api/forgot-password", {"email": "ann@example.com"})[0] == 202
        (message,) = smtp.inbox.wait_for(1, REQUEST_WAIT)
        assert (message["From"], message["To"], message["Subject"]) == (
            "Demo <demo@example.com>", "ann@example.com", "Reset your password")
        assert re.search(r"/api/reset-password\?token=[\w-]+&email=ann%40example.com",
                         message.get_body(("plain",)).get_content())
        failed = restify("mail:failed", env=env)
        assert (failed.returncode, failed.stdout) == (0, "No mail failed to send.\n"), failed.stderr
        assert len(smtp.inbox.messages) == 1  # the other process did not send it again
    finally:
        assert server.stop() == 0
        smtp.stop()
