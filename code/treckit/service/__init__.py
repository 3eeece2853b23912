"""The evaluation service: ``POST /v1/evaluate`` over the test-set runner, Prometheus metrics, auth
and limits.  It holds no evaluation logic of its own."""

TOKEN_ENV = "TRECKIT_API_TOKEN"      # the bearer token every route but health asks for, when set
