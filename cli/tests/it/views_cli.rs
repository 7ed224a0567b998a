//! End-to-end: the `cdkd-flow state list | show | resources` binary against the local
//! emulator, stdout, stderr and exit codes.

use std::time::Instant;

use cdkd_tests::{fresh_bucket, now_ms, put_raw, s3, CliRun};

fn run_cli(bucket: &str, args: &[&str]) -> CliRun {
    let mut all = vec!["--state-bucket", bucket];
    all.extend_from_slice(args);
    crate::run_cli_env(&all, &[])
}

async fn bucket_with(objects: &[(&str, String)]) -> String {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    for (key, body) in objects {
        put_raw(&s3, &bucket, key, body.clone().into_bytes()).await;
    }
    bucket
}

fn record(stack: &str, region: &str, resources: &str) -> String {
    format!(
        r#"{{"version":10,"stackName":"{stack}","region":"{region}","resources":{resources},"outputs":{{}},"lastModified":1777458225000}}"#
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn views_cli_region_flag_deprecated_on_state_commands_but_honoured() {
    // docs/state-views.md, "What every state command shares": `--region` still works and prints a deprecation warning on stderr.
    let b = bucket_with(&[(
        "cdkd/App/us-east-1/state.json",
        record("App", "us-east-1", "{}"),
    )])
    .await;
    let r = run_cli(&b, &["state", "list", "--region", "us-east-1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "App (us-east-1)\n");
    assert!(
        r.stderr
            .starts_with("warning: --region is deprecated on state commands"),
        "{}",
        r.stderr
    );
    let r = run_cli(&b, &["state", "list"]);
    assert!(!r.stderr.contains("deprecated"), "{}", r.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn views_cli_list_plain_sorted_and_empty_bucket() {
    let empty = bucket_with(&[]).await;
    let r = run_cli(&empty, &["state", "list"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
    let r = run_cli(&empty, &["state", "list", "--json"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "[]\n"));

    let b = bucket_with(&[
        (
            "cdkd/B/us-east-1/state.json",
            record("B", "us-east-1", "{}"),
        ),
        (
            "cdkd/A/us-west-2/state.json",
            record("A", "us-west-2", "{}"),
        ),
        (
            "cdkd/A/us-east-1/state.json",
            record("A", "us-east-1", "{}"),
        ),
        (
            "cdkd/A/state.json",
            r#"{"version":1,"stackName":"A","resources":{}}"#.to_string(),
        ),
        (
            "cdkd/My Stack/us-east-1/state.json",
            record("My Stack", "us-east-1", "{}"),
        ),
    ])
    .await;
    let r = run_cli(&b, &["state", "list"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "A (us-east-1)\nA (us-west-2)\nA\nB (us-east-1)\n\"My Stack\" (us-east-1)\n"
    );
    let r = run_cli(&b, &["state", "ls", "--json"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("\"stackName\": \"My Stack\""));
}

#[tokio::test(flavor = "multi_thread")]
async fn views_cli_list_long_degrades_rows_and_warns_on_stderr() {
    let lock = cdkd_tests::cdkd_lock_body("alice@ws:1", 1, now_ms() - 60_000, Some("deploy"));
    let b = bucket_with(&[
        (
            "cdkd/Bad/us-east-1/state.json",
            "{\"resources\": {".to_string(),
        ),
        (
            "cdkd/Str/us-east-1/state.json",
            r#"{"resources":"abcdef"}"#.to_string(),
        ),
        (
            "cdkd/Good/us-east-1/state.json",
            record("Good", "us-east-1", r#"{"R":{"resourceType":"T"}}"#),
        ),
        ("cdkd/Good/us-east-1/lock.json", lock),
        (
            "cdkd/Old/state.json",
            r#"{"version":1,"resources":{"x":{}}}"#.to_string(),
        ),
    ])
    .await;
    let r = run_cli(&b, &["state", "list", "--long"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "Bad (us-east-1)\n  Region: us-east-1\n  Resources: unknown (state record could not be read; run `cdkd-flow state show` for the error)\n  Last Modified: unknown\n  Lock: unlocked\n\n\
         Good (us-east-1)\n  Region: us-east-1\n  Resources: 1\n  Last Modified: 2026-04-29T10:23:45.000Z\n  Lock: locked\n\n\
         Old\n  Region: (legacy)\n  Resources: 0\n  Last Modified: unknown\n  Lock: unlocked\n\n\
         Str (us-east-1)\n  Region: us-east-1\n  Resources: unknown (resources is not a JSON object; run `cdkd-flow state show --json` to see the record)\n  Last Modified: unknown\n  Lock: unlocked\n"
    );
    assert!(r
        .stderr
        .contains("2 of 4 stack(s) could not be fully read or counted; their rows say why."));
    let r = run_cli(&b, &["state", "list", "--long", "--json"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("[\n  {\n    \"stackName\": \"Bad\",\n    \"region\": \"us-east-1\",\n    \"resourceCount\": null,"));
    assert!(r.stderr.contains("2 of 4 stack(s)"));
    assert!(!r.stdout.contains("could not be fully read"));
}

#[tokio::test(flavor = "multi_thread")]
async fn list_16_tree_long_refused_before_any_s3_call_and_views_cli_list_tree() {
    let b = bucket_with(&[
        ("cdkd/Root/us-east-1/state.json", record("Root", "us-east-1", "{}")),
        (
            "cdkd/Root~A/us-east-1/state.json",
            r#"{"version":10,"stackName":"Root~A","region":"us-east-1","parentStack":"Root","parentLogicalId":"A","parentRegion":"us-east-1","resources":{}}"#.to_string(),
        ),
        (
            "cdkd/Orphan~B/us-east-1/state.json",
            r#"{"version":10,"parentStack":"Root","parentRegion":"eu-west-1","resources":{}}"#.to_string(),
        ),
    ])
    .await;
    let r = run_cli(&b, &["state", "list", "--tree"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "Orphan~B (us-east-1)\nRoot (us-east-1)\n└── Root~A (us-east-1)\n"
    );
    let r = run_cli(&b, &["state", "list", "--tree", "--json"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("\"parentRegion\": \"eu-west-1\""));
    // --tree with --long is a usage error before any S3 call: an unreachable endpoint
    // proves no request was made.
    let out = crate::run_cli_env(
        &["state", "list", "--tree", "--long"],
        &[("AWS_ENDPOINT_URL", "http://127.0.0.1:9")],
    );
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("cannot be used with"));
}

#[tokio::test(flavor = "multi_thread")]
async fn views_cli_show_human_json_and_lock_row() {
    let expires = now_ms() + 600_500;
    let b = bucket_with(&[
        (
            "cdkd/App/us-east-1/state.json",
            r#"{"version":10,"stackName":"App","region":"us-east-1","resources":{"R":null,"Q":{"resourceType":"AWS::SQS::Queue","physicalId":"q","dependencies":["R"]}},"outputs":{"Ex\u001b[31mport":"a\nb"},"skippedOutputs":{"Url":"0123456789abcdef"},"lastModified":1777458225000}"#.to_string(),
        ),
        (
            "cdkd/App/us-east-1/lock.json",
            format!(r#"{{"owner":"alice@ws:1","operation":"deploy","expiresAt":{expires}}}"#),
        ),
    ])
    .await;
    let r = run_cli(&b, &["state", "show", "App"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Without a timestamp the lock lives until expiresAt on S3's clock, which counts
    // whole seconds (docs/state-and-lock.md, "Lock time is S3's"): about 10 minutes, to a second.
    let head = "Stack: App\n  Region: us-east-1\n  Version: 10\n  Last Modified: 2026-04-29T10:23:45.000Z\n  Lock: locked by alice@ws:1 (operation: deploy), expires in ";
    assert!(r.stdout.starts_with(head), "{}", r.stdout);
    let left = r.stdout[head.len()..].split('\n').next().unwrap();
    assert!(
        ["9m58s", "9m59s", "10m0s", "10m1s"].contains(&left),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("\nOutputs:\n  Ex[31mport: ab\n"));
    assert!(r
        .stdout
        .contains("\nSkipped outputs:\n  Url: 0123456789ab…\n\nThe last deploy could not resolve"));
    assert!(r.stdout.contains("\nResources (2):\n\nQ\n"));
    assert!(!r.stdout.contains('\u{1b}'));
    let r = run_cli(&b, &["state", "show", "App", "--json"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("\"R\": null"));
    assert!(r.stdout.contains("Ex\\u001b[31mport"));
    assert!(r.stdout.contains("\"owner\": \"alice@ws:1\""));
}

#[tokio::test(flavor = "multi_thread")]
async fn views_cli_show_refusals_exit_1() {
    let b = bucket_with(&[
        (
            "cdkd/Two/us-east-1/state.json",
            record("Two", "us-east-1", "{}"),
        ),
        (
            "cdkd/Two/eu-west-1/state.json",
            record("Two", "eu-west-1", "{}"),
        ),
        (
            "cdkd/Old/state.json",
            r#"{"version":1,"resources":{}}"#.to_string(),
        ),
        (
            "cdkd/Bad/us-east-1/state.json",
            "{\"resources\": \n{".to_string(),
        ),
        (
            "cdkd/Badlock/us-east-1/state.json",
            record("Badlock", "us-east-1", "{}"),
        ),
        ("cdkd/Badlock/us-east-1/lock.json", "{oops".to_string()),
        (
            "cdkd/P/us-east-1/state.json",
            record(
                "P",
                "us-east-1",
                r#"{"Child":{"resourceType":"AWS::CloudFormation::Stack"}}"#,
            ),
        ),
    ])
    .await;
    let r = run_cli(&b, &["state", "show", "Two"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("has state in multiple regions: eu-west-1, us-east-1"),
        "{}",
        r.stderr
    );
    let r = run_cli(&b, &["state", "show", "Two", "--stack-region", "eu-west-1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run_cli(&b, &["state", "show", "Missing"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("No state found for stack 'Missing'."));
    let r = run_cli(&b, &["state", "show", "Old"]);
    assert_eq!(r.code, 1);
    assert!(r
        .stderr
        .contains("has only a legacy state record without a region"));
    assert!(
        r.stderr
            .lines()
            .any(|l| l == "Migrate with: cdkd deploy Old"),
        "{}",
        r.stderr
    );
    let r = run_cli(&b, &["state", "show", "Bad"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("is not valid JSON"), "{}", r.stderr);
    assert_eq!(r.stderr.trim_end().lines().count(), 1, "{}", r.stderr);
    let r = run_cli(&b, &["state", "show", "Badlock"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("Failed to get lock info for stack 'Badlock'"),
        "{}",
        r.stderr
    );
    let r = run_cli(&b, &["state", "show", "P", "--show-nested"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("nested-child 'P~Child' (us-east-1)"),
        "{}",
        r.stderr
    );
    let r = run_cli(&b, &["state", "show", "Two", "--stack-region", ""]);
    assert_eq!(r.code, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn views_cli_show_nested_text_and_json_warn_for_unreadable_child_bag() {
    let b = bucket_with(&[
        (
            "cdkd/P/us-east-1/state.json",
            record("P", "us-east-1", r#"{"C":{"resourceType":"AWS::CloudFormation::Stack","physicalId":"arn"}}"#),
        ),
        ("cdkd/P~C/us-east-1/state.json", r#"{"version":10,"stackName":"P~C","region":"us-east-1","resources":5,"skippedOutputs":{"K":"d"}}"#.to_string()),
    ])
    .await;
    let r = run_cli(&b, &["state", "show", "P", "--show-nested"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("\nNested stack: P~C\nStack: P~C\n"));
    assert_eq!(
        r.stdout
            .matches("The last deploy could not resolve")
            .count(),
        1
    );
    assert!(r
        .stderr
        .contains("State for 'P~C' (us-east-1) has no readable 'resources' map"));
    let r = run_cli(&b, &["state", "show", "P", "--show-nested", "--json"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("\"children\": []"));
    assert!(r.stderr.contains("'P~C'"));
    let r = run_cli(&b, &["state", "show", "P", "--json"]);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn views_cli_resources_modes() {
    let b = bucket_with(&[(
        "cdkd/App/us-east-1/state.json",
        record(
            "App",
            "us-east-1",
            r#"{"R1":{"resourceType":"AWS::S3::Bucket","physicalId":"bkt","attributes":"x"},"LongId":{"resourceType":"AWS::SQS::Queue","physicalId":"url","dependencies":null,"properties":{"A":1}}}"#,
        ),
    )])
    .await;
    let r = run_cli(&b, &["state", "resources", "App"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "LongId  AWS::SQS::Queue  url\nR1      AWS::S3::Bucket  bkt\n"
    );
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let r = run_cli(&b, &["state", "resources", "App", "--long"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("LongId\n  Type: AWS::SQS::Queue\n  PhysicalID: url\n  Dependencies: (none)\n  Attributes: (none)\n"));
    assert!(!r.stdout.contains("Properties"));
    assert!(r.stderr.contains("'attributes'"));
    let r = run_cli(&b, &["state", "resources", "App", "--json", "--long"]);
    assert_eq!(r.code, 0);
    assert!(r
        .stdout
        .starts_with("[\n  {\n    \"logicalId\": \"LongId\","));
    let r = run_cli(&b, &["state", "resources", "Nope"]);
    assert_eq!(r.code, 1);
}

/// `state list --long` over 1,000 records: prints the wall time (the figure the
/// benchmark reports) and checks the reads are not one at a time.
#[tokio::test(flavor = "multi_thread")]
async fn views_cli_bench_list_long_1000_records() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let body = record("S", "us-east-1", r#"{"R":{"resourceType":"T"}}"#);
    let puts = (0..1000).map(|i| {
        let (s3, bucket, body) = (s3.clone(), bucket.clone(), body.clone());
        async move {
            put_raw(
                &s3,
                &bucket,
                &format!("cdkd/Stack{i:04}/us-east-1/state.json"),
                body.into_bytes(),
            )
            .await
        }
    });
    futures::future::join_all(puts).await;
    let started = Instant::now();
    let r = run_cli(&bucket, &["state", "list", "--long"]);
    let elapsed = started.elapsed();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.matches("  Resources: 1\n").count(), 1000);
    println!(
        "BENCH state list --long over 1000 records (emulator): {} ms",
        elapsed.as_millis()
    );
}
