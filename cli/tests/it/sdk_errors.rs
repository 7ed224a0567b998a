//! An AWS SDK failure reaches the user as one readable line naming what could not be
//! reached and why; the SDK's `Debug` form appears only with `-v`.

/// An endpoint nothing listens on.
const UNREACHABLE: &str = "http://127.0.0.1:1";

fn state_list(extra: &[&str]) -> cdkd_tests::CliRun {
    let mut args = vec!["--state-bucket", "cdkd-flow-unreachable", "state", "list"];
    args.extend_from_slice(extra);
    crate::run_cli_env(
        &args,
        &[
            ("AWS_ENDPOINT_URL", UNREACHABLE),
            // Fail fast: one attempt per call.
            ("AWS_MAX_ATTEMPTS", "1"),
        ],
    )
}

#[test]
fn an_unreachable_endpoint_is_one_line_naming_the_endpoint_and_the_cause() {
    let r = state_list(&[]);
    assert_ne!(r.code, 0, "{r:?}");
    let errors: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert_eq!(errors.len(), 1, "{}", r.stderr);
    assert!(
        errors[0].contains("cannot reach the AWS endpoint http://127.0.0.1:1 (connection refused)"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("DispatchFailure"), "{}", r.stderr);
    assert!(!r.stderr.contains("ConnectorError"), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
}

#[test]
fn verbose_adds_the_sdk_debug_form() {
    let r = state_list(&["-v"]);
    assert_ne!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains("cannot reach the AWS endpoint http://127.0.0.1:1 (connection refused)"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("DispatchFailure"), "{}", r.stderr);
}
