"""Settings of one web server: secrets, limits and timings, passed to :func:`create_app`."""

from __future__ import annotations

import secrets

from pydantic import BaseModel, ConfigDict, Field

from corix.web.security import PASSWORD_LANES, PASSWORD_MEMORY_KIB, PASSWORD_TIME_COST


def random_secret_key() -> str:
    return secrets.token_urlsafe(32)


class WebSettings(BaseModel):
    """Everything the web app can be tuned with. The defaults suit a real deployment."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    secret_key: str = Field(default_factory=random_secret_key, min_length=1)
    """Signs CSRF tokens. A new random key per start invalidates forms left open."""
    cookie_secure: bool | None = None
    """``None``: mark cookies Secure when the request came over HTTPS."""
    public_url: str | None = Field(default=None, pattern=r"^https?://[^\s/]+(/\S*)?$")
    """Where people reach the server (``https://corix.example.org``, behind a proxy):
    invitation links start with it. ``None``: the address the request came to."""
    session_hours: float = Field(default=12.0, gt=0)
    invitation_days: float = Field(default=7.0, gt=0)
    min_password_chars: int = Field(default=10, ge=1)
    max_message_chars: int = Field(default=4000, ge=1)
    max_text_answer_chars: int = Field(default=5000, ge=1)
    login_max_failures: int = Field(default=5, ge=1)
    """Failed sign-ins of one account before each further attempt waits, doubling."""
    login_window_s: float = Field(default=15 * 60, gt=0)
    login_max_delay_s: float = Field(default=15 * 60, gt=0)
    """The longest an account waits between attempts, however many failures."""
    login_max_per_address: int = Field(default=50, ge=1)
    """Attempts from one address (any accounts) in the window before each is slowed."""
    login_address_delay_s: float = Field(default=2.0, ge=0)
    qualification_pass_mark: float = Field(default=0.8, ge=0, le=1)
    qualification_draw_size: int = Field(default=4, ge=1)
    """Gold dialogues drawn at random for each attempt, from the pool in training/gold.yaml."""
    qualification_max_attempts: int = Field(default=3, ge=1)
    qualification_cooldown_minutes: float = Field(default=30.0, ge=0)
    annotation_claim_minutes: float = Field(default=60.0, gt=0)
    """How long a claimed dialogue waits for its annotator before others may take it, in a
    series that does not set its own (its page, under Annotators)."""
    chat_reply_deadline_s: float = Field(default=60.0, gt=0)
    """One total deadline for an application's reply to a tester, retries included."""
    application_check_timeout_s: float = Field(default=30.0, gt=0)
    """Registering an application runs `corix app check`'s check, bounded by this."""
    password_time_cost: int = Field(default=PASSWORD_TIME_COST, ge=1)
    password_memory_kib: int = Field(default=PASSWORD_MEMORY_KIB, ge=8)
    password_lanes: int = Field(default=PASSWORD_LANES, ge=1)
    password_hash_threads: int = Field(default=1, ge=1)
    """Passwords hashed at once per process: each holds ``password_memory_kib``."""
    password_queue: int = Field(default=100, ge=0)
    """Sign-ins that may wait for a hashing thread; more are asked to retry in a moment."""
    password_max_wait_s: float = Field(default=3.0, gt=0)
    """The longest a sign-in may wait for a hashing thread, estimated from how long hashes
    take on this host; past it the page says to retry in so many seconds (503)."""
