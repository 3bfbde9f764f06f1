"""Settings: defaults, then restify.toml in the app directory, then the environment."""
from pathlib import Path

import pytest

from service.config import Settings, load_settings


def write_toml(app_dir, text):
    (app_dir / "restify.toml").write_text(text)
    return app_dir


def test_defaults_without_file_or_environment(tmp_path):
    settings = load_settings(tmp_path, environ={})
    assert settings.app_dir == tmp_path.resolve()
    assert settings.get("server", "port") == 8000
    assert settings.get("server", "prefix") == "/api/restify"
    assert settings.get("pagination", "per_page") == 15
    assert settings.get("pagination", "relatable_per_page") == 15
    assert settings.max_per_page is None
    assert settings.mongodb_uri == ""
    assert settings.requires_user is False


def test_restify_toml_in_the_app_dir_overrides_defaults(tmp_path):
    write_toml(tmp_path, '[pagination]\nmax_per_page = 100\n[server]\nprefix = "/api/v2"\n'
                         '[routes]\nmiddleware = ["auth:token"]\n')
    settings = load_settings(tmp_path, environ={})
    assert settings.max_per_page == 100
    assert settings.get("server", "prefix") == "/api/v2"
    assert settings.get("server", "port") == 8000  # keys the file leaves out keep their default
    assert settings.requires_user is True


def test_environment_wins_over_restify_toml(tmp_path):
    write_toml(tmp_path, '[pagination]\nmax_per_page = 100\n[server]\nport = 7000\nprefix = "/api/v2"\n')
    settings = load_settings(tmp_path, environ={
        "RESTIFY_PAGINATION_MAX_PER_PAGE": "50",
        "RESTIFY_SERVER_PREFIX": "/v3",
        "PORT": "9000",
        "MONGODB_URI": "mongodb://db.example:27017/app",
    })
    assert settings.get("pagination", "max_per_page") == 50
    assert settings.max_per_page == 50
    assert settings.get("server", "prefix") == "/v3"  # not a TOML literal: kept as text
    assert settings.get("server", "port") == 9000
    assert settings.mongodb_uri == "mongodb://db.example:27017/app"


def test_unrelated_environment_variables_are_ignored(tmp_path):
    settings = load_settings(tmp_path, environ={"RESTIFY_TOKEN": "1|secret", "HOME": "/root", "PORT": ""})
    assert settings.values == Settings(app_dir=tmp_path).values


@pytest.mark.parametrize("raw", [None, 0, "0", "", "  ", -5, "-1", "many", True, False])
def test_max_per_page_means_no_cap_for_null_zero_empty_negative_or_non_numeric(raw):
    assert Settings({"pagination": {"max_per_page": raw}}).max_per_page is None


@pytest.mark.parametrize("raw, cap", [(50, 50), ("50", 50), (" 25 ", 25), (1, 1)])
def test_max_per_page_is_the_configured_positive_integer(raw, cap):
    assert Settings({"pagination": {"max_per_page": raw}}).max_per_page == cap


@pytest.mark.parametrize("raw, cap", [(None, None), (0, None), ("", None), (-1, None), ("many", None), (True, None),
                                      (1000, 1000), ("1000", 1000)])
def test_max_related_rows_reads_like_max_per_page(raw, cap):
    assert Settings({"query": {"max_related_rows": raw}}).max_related_rows == cap


def test_max_related_rows_has_no_cap_by_default_and_the_demo_sets_one():
    assert Settings().max_related_rows is None
    assert load_settings(Path(__file__).resolve().parents[2], environ={}).max_related_rows == 1000


@pytest.mark.parametrize("raw, cap", [(None, None), (0, None), ("", None), (-1, None), (4096, 4096), ("4096", 4096)])
def test_max_response_bytes_is_8_mib_by_default_and_reads_like_the_other_caps(raw, cap):
    assert Settings().max_response_bytes == 8_388_608
    assert load_settings(Path(__file__).resolve().parents[2], environ={}).max_response_bytes == 8_388_608
    assert Settings({"server": {"max_response_bytes": raw}}).max_response_bytes == cap
    assert load_settings(Path(__file__).resolve().parents[2], environ={"RESTIFY_SERVER_MAX_RESPONSE_BYTES": "65536"}
                         ).max_response_bytes == 65536


# -- defaults live in DEFAULTS only ----------------------------------------------------------------

@pytest.mark.parametrize("raw, expected", [(None, 15), ("", 15), (0, 15), (-3, 15), ("many", 15), (True, 15),
                                           (7, 7), ("7", 7), (" 7 ", 7), (2.5, 2.5)])
def test_a_positive_setting_left_empty_or_not_above_zero_takes_its_default(raw, expected):
    assert Settings({"pagination": {"per_page": raw}}).positive("pagination", "per_page") == expected


@pytest.mark.parametrize("raw, expected", [(None, 100), ("", 100), ("many", 100), (0, 0), (5, 5), ("5", 5)])
def test_a_number_setting_keeps_zero_and_takes_its_default_when_empty(raw, expected):
    assert Settings({"live": {"max_queue": raw}}).number("live", "max_queue") == expected


@pytest.mark.parametrize("raw, expected", [(None, "text"), ("", "text"), ("json", "json")])
def test_a_setting_left_empty_takes_its_default(raw, expected):
    assert Settings({"log": {"format": raw}}).value("log", "format") == expected


def test_the_hashing_lane_and_the_registration_window_take_the_defaults_of_the_settings_module():
    """Two fallbacks used to disagree with DEFAULTS: a queue of its own, a 60 s window instead of 3600."""
    settings = Settings({"auth": {"hash_threads": 0, "hash_queue": None, "registration_window_seconds": 0}})
    assert settings.cap("auth", "hash_threads") is None and settings.number("auth", "hash_queue") == 64
    assert settings.positive("auth", "registration_window_seconds") == 3600


def test_no_module_keeps_a_default_of_its_own_for_a_setting():
    """`settings.get(...) or 15` and `get(..., 15)` would repeat DEFAULTS; `value`, `number` and `positive`
    read it instead."""
    import re
    service = Path(__file__).resolve().parents[2] / "service"
    own_default = re.compile(r"settings\.get\([^()]*\)\s*or\b|settings\.get\(\s*\"\w+\",\s*\"\w+\",|"
                             r"settings\.(value|number|positive)\([^()]*\)\s*or\s*[\d\"'\[]")
    found = {str(path.relative_to(service.parent)) for path in service.rglob("*.py")
             if own_default.search(path.read_text())}
    assert found == set()


def test_the_hashing_lane_takes_half_the_cores_unless_told():
    """A hash slows what runs beside it whatever its priority (a core's sibling, the 64 MiB it sweeps):
    by default a burst of logins leaves half the cores to every other request."""
    from service.core.kernel import Passwords, cores
    assert Passwords(time_cost=1, memory_kib=8).threads == max(1, cores() // 2)
    assert Passwords(time_cost=1, memory_kib=8, threads=3).threads == 3


def test_settings_read_on_every_request_are_read_anew_after_a_change(tmp_path):
    settings = Settings(app_dir=tmp_path)
    assert settings.max_per_page is None and settings.positive("pagination", "per_page") == 15
    assert settings.requires_user is False
    settings.set("pagination", "max_per_page", 7)
    settings.set("pagination", "per_page", "5")
    settings.set("routes", "middleware", ["auth:token"])
    assert settings.max_per_page == 7 and settings.positive("pagination", "per_page") == 5
    assert settings.requires_user is True
    settings.set("pagination", "max_per_page", 0)
    settings.set("pagination", "per_page", -1)
    assert settings.max_per_page is None and settings.positive("pagination", "per_page") == 15
