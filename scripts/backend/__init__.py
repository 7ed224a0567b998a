"""The deploy of the project's backend into the local emulator (scripts/deploy_backend.py):
`package` (sam package), `translate` (the SAM transform), `stack` (CreateStack and its
wait), `account` (the state bucket, the operator's policies, the administrator, the
emulator's switches)."""
