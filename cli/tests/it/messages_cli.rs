//! End-to-end: the CLI's messages (docs/cli.md, "Failure lines" and
//! "Stack names"): a stack name no cdkd stack can have is a usage error before any AWS
//! call, for every command taking a stack; non-ASCII names are printed whole; failure
//! lines begin with `error:`.
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-flow --test e2e -- --test-threads=1 messages_cli`.

use cdkd_tests as h;
use serde_json::json;

const REGION: &str = "us-east-1";

/// Every command that takes a stack refuses `App<LF>X` as a usage error (exit 2) with
/// one `error:` line, before any AWS call: the endpoint here is a closed port, so a call
/// would have failed as an AWS error (exit 1) instead.
#[test]
fn messages_cli_stack_name_with_a_control_character_is_a_usage_error_before_any_aws_call() {
    let bad = "App\nX";
    let commands: Vec<Vec<&str>> = vec![
        vec!["state", "show", bad],
        vec!["state", "resources", bad],
        vec!["state", "orphan", bad, "-y"],
        vec!["state", "orphan", bad, "--resource", "R", "-y"],
        vec!["state", "refresh-observed", bad, "-y"],
        vec!["destroy", bad, "-y", "--local"],
        vec![
            "export",
            bad,
            "--template",
            "t.json",
            "--dry-run",
            "--local",
        ],
        vec!["force-unlock", bad],
        vec!["force-unlock", "--stack", "A\u{1b}[2J"],
    ];
    for args in commands {
        let mut all = vec!["--state-bucket", "b", "--region", REGION];
        all.extend(args.iter().copied());
        let r = crate::run_cli_env(&all, &[("AWS_ENDPOINT_URL", "http://127.0.0.1:9")]);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        let line = r
            .stderr
            .lines()
            .find(|l| l.starts_with("error: "))
            .unwrap_or_default();
        assert!(
            line.contains(
                "is not a stack name any cdkd stack can have: it contains a control character"
            ),
            "{args:?}: {r:?}"
        );
        assert!(!r.stderr.contains('\u{1b}'), "{args:?}: {r:?}");
    }
}

/// A non-ASCII stack name is printed whole (it was `'rd rs'`), in refusals and in the
/// commands they print.
#[tokio::test]
async fn messages_cli_non_ascii_stack_name_is_printed_whole() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let name = "\u{d6}rd\u{e9}rs";
    let r = crate::run_cli_env(&["--state-bucket", &bucket, "state", "show", name], &[]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .starts_with(&format!("error: No state found for stack '{name}'.")),
        "{r:?}"
    );
    let r = crate::run_cli_env(
        &[
            "--state-bucket",
            &bucket,
            "destroy",
            name,
            "-y",
            "--local",
            "--fast",
        ],
        &[],
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains(name), "{r:?}");
    assert!(!r.stderr.contains("rd rs"), "{r:?}");
    // A held lock: the contention refusal names the stack and its force-unlock command.
    let record = json!({"version": 10, "stackName": name, "region": REGION,
        "resources": {}, "outputs": {}, "lastModified": 1});
    let key = format!("cdkd/{name}/{REGION}/state.json");
    h::put_raw(&s3, &bucket, &key, record.to_string()).await;
    let lock = json!({"owner": "someone@host", "timestamp": h::now_ms(),
        "expiresAt": h::now_ms() + 600_000, "operation": "deploy"});
    let key = format!("cdkd/{name}/{REGION}/lock.json");
    h::put_raw(&s3, &bucket, &key, lock.to_string()).await;
    let r = crate::run_cli_env(
        &[
            "--state-bucket",
            &bucket,
            "state",
            "orphan",
            name,
            "--resource",
            "R",
            "-y",
        ],
        &[],
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains(&format!(
            "cdkd-flow force-unlock '{name}' --stack-region {REGION}"
        )),
        "{r:?}"
    );
}

/// The refusals of a destroy printed per stack after planning, and its summary, begin
/// with `error:`.
#[tokio::test]
async fn messages_cli_destroy_refusal_lines_begin_with_error() {
    let bucket = h::fresh_bucket(&h::s3().await).await;
    let r = crate::run_cli_env(
        &[
            "--state-bucket",
            &bucket,
            "destroy",
            "Missing",
            "-y",
            "--local",
            "--fast",
        ],
        &[],
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert!(!r.stderr.trim().is_empty(), "{r:?}");
    for line in r.stderr.lines().filter(|l| !l.starts_with(' ')) {
        assert!(
            line.starts_with("error: ") || line.starts_with("warning: "),
            "{line:?} in {r:?}"
        );
    }
}

/// A workflow run that fails ends on an `error:` line on stderr (its
/// result stays on stdout).
#[test]
fn messages_cli_a_failed_workflow_run_ends_on_an_error_line() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("messages_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let def = dir.join("fail.asl.json");
    std::fs::write(
        &def,
        r#"{"StartAt":"F","States":{"F":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"cdkd-flow:test:fail","Payload.$":"$"},"End":true}}}"#,
    )
    .unwrap();
    let def = def.to_string_lossy().to_string();
    let run = crate::run_cli_env(
        &[
            "workflow",
            "run",
            &def,
            "--fast",
            "--input",
            r#"{"error":"Boom","cause":"it broke"}"#,
        ],
        &[],
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("FAILED"), "{}", run.stdout);
    let last = run.stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: the execution failed (Boom): it broke"),
        "{}",
        run.stderr
    );
}
