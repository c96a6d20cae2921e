"""Settings of one web server: secrets, limits and timings, passed to :func:`create_app`."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field


def random_secret_key() -> str:
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class WebSettings:
    """Everything the web app can be tuned with. The defaults suit a real deployment."""

    secret_key: str = field(default_factory=random_secret_key)
    """Signs CSRF tokens. A new random key per start invalidates forms left open."""
    cookie_secure: bool | None = None
    """``None``: mark cookies Secure when the request came over HTTPS."""
    session_hours: float = 12.0
    invitation_days: float = 7.0
    min_password_chars: int = 10
    max_message_chars: int = 4000
    max_text_answer_chars: int = 5000
    login_max_failures: int = 5
    login_window_s: float = 15 * 60
    qualification_pass_mark: float = 0.8
    qualification_draw_size: int = 4
    """Gold dialogues drawn at random for each attempt, from the pool in training/gold.yaml."""
    qualification_max_attempts: int = 3
    qualification_cooldown_minutes: float = 30.0
    application_check_timeout_s: float = 30.0
    """Registering an application runs `corix app check`'s check, bounded by this."""
    password_time_cost: int = 3
    password_memory_kib: int = 64 * 1024
