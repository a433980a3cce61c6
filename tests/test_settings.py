"""Where a setting comes from: a given value, then the environment, then an env file, then the default."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from correlator.config import Settings, environment


def test_the_environment_is_read_by_prefix_in_any_case_and_empty_values_are_left_out() -> None:
    env = {"CORRELATOR_RAW_BATCH": "500", "correlator_lookahead_ms": "9000", "CORRELATOR_TZ": "",
           "OTHER_RAW_BATCH": "7", "CORRELATOR_NO_SUCH_SETTING": "x"}
    assert environment(env) == {"raw_batch": "500", "lookahead_ms": "9000", "no_such_setting": "x"}


def test_given_values_win_over_the_environment_which_wins_over_the_env_file(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env_file = tmp_path / "correlator.env"
    env_file.write_text("# a comment\nCORRELATOR_RAW_BATCH=300\nexport CORRELATOR_LOOKAHEAD_MS='7000'\n"
                        "CORRELATOR_IDLE_TIMEOUT_MS=\n# CORRELATOR_SLOW_WRITE_MS=5\n", encoding="utf-8")
    monkeypatch.setenv("CORRELATOR_RAW_BATCH", "400")
    loaded = Settings(_env_file=env_file)
    assert (loaded.raw_batch, loaded.lookahead_ms) == (400, 7000)
    assert loaded.idle_timeout_ms == Settings.model_fields["idle_timeout_ms"].default
    assert loaded.slow_write_ms == Settings.model_fields["slow_write_ms"].default
    assert Settings(raw_batch=20).raw_batch == 20


def test_a_bad_value_in_the_environment_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORRELATOR_RAW_BATCH", "many")
    with pytest.raises(ValidationError, match="raw_batch"):
        Settings()


def test_settings_are_frozen_and_keep_secrets_out_of_their_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORRELATOR_SLACK_TOKEN", "xoxb-not-to-be-seen")
    loaded = Settings()
    assert "xoxb-not-to-be-seen" not in repr(loaded)
    assert loaded.slack_token_value() == "xoxb-not-to-be-seen"
    with pytest.raises(ValidationError):
        loaded.raw_batch = 1  # type: ignore[misc]
