//! The CLI's one stdout writer treats a closed pipe as success: `cdkd-flow ... | head -1`
//! ends with status 0 and no panic, even when the output is far larger than the pipe's
//! buffer (so a write certainly fails with EPIPE after the reader has gone).

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use cdkd_tests::{fresh_bucket, put_raw, s3, sdk};
use serde_json::json;

/// What a run whose stdout reader went away after one line left behind.
struct Closed {
    first_line: String,
    code: Option<i32>,
    stderr: String,
}

/// Runs `cdkd-flow <args>` with stdout piped, reads one line, closes the read end, and
/// waits for the process.
fn run_and_close_after_one_line(args: &[&str]) -> Closed {
    let mut child = crate::cli_command(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cdkd-flow");
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut reader = BufReader::new(stdout);
    let mut first_line = String::new();
    reader.read_line(&mut first_line).expect("read one line");
    drop(reader);
    let out = child.wait_with_output().expect("wait for cdkd-flow");
    Closed {
        first_line,
        code: out.status.code(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn assert_quiet_success(r: &Closed) {
    assert!(!r.first_line.is_empty(), "no output at all: {}", r.stderr);
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(!r.stderr.contains("Broken pipe"), "{}", r.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn state_list_into_a_pipe_closed_after_one_line_exits_0_without_a_panic() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    // 100 names of 900 characters: about 90 KiB of output, more than a pipe holds.
    for i in 0..100 {
        let stack = format!("S{i:03}{}", "x".repeat(896));
        let body = format!(
            r#"{{"version":10,"stackName":"{stack}","region":"us-east-1","resources":{{}},"outputs":{{}},"lastModified":1}}"#
        );
        put_raw(
            &s3,
            &bucket,
            &format!("cdkd/{stack}/us-east-1/state.json"),
            body,
        )
        .await;
    }
    let r = tokio::task::spawn_blocking(move || {
        run_and_close_after_one_line(&["--state-bucket", &bucket, "state", "list"])
    })
    .await
    .expect("the run finishes");
    assert!(r.first_line.starts_with("S000x"), "{}", r.first_line);
    assert_quiet_success(&r);
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_list_json_into_a_pipe_closed_after_one_line_exits_0_without_a_panic() {
    let sfn = aws_sdk_sfn::Client::new(&sdk().await);
    let id = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let definition = r#"{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}"#;
    let mut arns = Vec::new();
    for kind in ["destroy", "cleanup"] {
        let arn = sfn
            .create_state_machine()
            .name(format!("cdkd-flow-pipe-{kind}-{id}"))
            .definition(definition)
            .role_arn("arn:aws:iam::123456789012:role/cdkd-flow-broken-pipe")
            .send()
            .await
            .expect("CreateStateMachine")
            .state_machine_arn;
        arns.push(arn);
    }
    // 20 runs whose input names a 5000-character stack: about 100 KiB of JSON.
    for i in 0..20 {
        let input = json!({"stack": format!("P{i:02}{}", "y".repeat(5000)), "stateBucket": "b"});
        sfn.start_execution()
            .state_machine_arn(&arns[0])
            .name(format!("destroy-pipe-{id}-{i:02}"))
            .input(input.to_string())
            .send()
            .await
            .expect("StartExecution");
    }
    let (destroy, cleanup) = (arns[0].clone(), arns[1].clone());
    let r = tokio::task::spawn_blocking(move || {
        run_and_close_after_one_line(&[
            "runs",
            "list",
            "--json",
            "--destroy-state-machine-arn",
            &destroy,
            "--cleanup-state-machine-arn",
            &cleanup,
        ])
    })
    .await
    .expect("the run finishes");
    assert_eq!(r.first_line, "[\n");
    assert_quiet_success(&r);
}
