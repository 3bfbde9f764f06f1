from setuptools import find_packages, setup

setup(
    name="restify-python",
    version="0.1.0",
    description="Repositories over MongoDB served as a JSON REST API, GraphQL and MCP tools.",
    python_requires=">=3.11",
    packages=find_packages(include=["service", "service.*", "storage", "storage.*", "worker", "worker.*"]),
    package_data={"service.console": ["*.tmpl", "app_template/*.tmpl", "app_template/*/*.tmpl"],
                  # the API explorer's vendored pages (Swagger UI, GraphiQL) and their licences
                  "service.http.explorer": ["static/*.js", "static/*.css", "static/*.md", "static/licenses/*"]},
    install_requires=[
        "tornado>=6.4",
        "motor>=3.5",
        "orjson>=3.9",
        "pymongo>=4.8",
        "voluptuous>=0.14",
        "graphql-core>=3.3,<3.4",
        "watchfiles>=0.21",
        "mcp>=2",
        "argon2-cffi>=23",
        "nx-27017>=0.8",
        "prometheus-client>=0.20",
        "cryptography>=42",
        "aiosmtplib>=3",
    ],
    extras_require={
        "test": ["pytest>=8,<10", "pytest-xdist>=3.5", "pytest-tornasync>=0.6", "requests>=2.31",
                 "openapi-spec-validator>=0.7",
                 "schemathesis>=4.32,<5", "hypothesis>=6.100", "openapi-python-client>=0.29,<0.30",
                 "honcho>=2", "aiosmtpd>=1.4",
                 "httpx-sse>=0.4", "gql[websockets,httpx]>=3.5",
                 "playwright>=1.45"],  # drives the system's Chromium (tests/explorer); its browsers are not installed
        "lint": ["ruff>=0.6,<1", "mypy>=1.10,<3"],
        "docs": ["mkdocs>=1.6,<2"],
        "bench": ["eve>=2.3,<2.4", "gunicorn>=22"],  # the peer `python -m bench.run` measures beside bare
    },
    entry_points={"console_scripts": ["restify=service.cli:main"]},
)
