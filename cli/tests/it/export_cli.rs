//! End-to-end: `cdkd-flow export --dry-run --local` (the binary) against the emulator.
//! Records from `tests/fixtures/export/state/`, templates from a JSON file and from a
//! three-level cloud assembly; the summary (snapshots), `--json` against the run's
//! plan.json, the templates uploaded under the run's prefix, and what a dry run must
//! leave alone: every state and lock object, and CloudFormation (no stack created).
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test e2e -- --test-threads=1 export_cli`.

use std::path::{Path, PathBuf};

use crate::export_support::{real_stack, uniq, RealStack, REGION};
use cdkd_tests as h;
use serde_json::Value;

const FLAT: &str = "ExportFlat";
const NESTED: &str = "ExportNested";
const MIDDLE: &str = "ExportNested~MiddleNestedStackMiddleNestedStackResource9C3D5E7F";
const LEAF: &str = "ExportNested~MiddleNestedStackMiddleNestedStackResource9C3D5E7F~LeafNestedStackLeafNestedStackResource7B9D1F3A";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/export")
}

fn fixture(rel: &str) -> String {
    fixtures().join(rel).to_string_lossy().into_owned()
}

/// A fresh bucket holding the fixture records of `stacks`.
async fn seeded(stacks: &[&str]) -> String {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    for s in stacks {
        let path = fixtures().join(format!("state/{s}.state.json"));
        let body = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        h::put_raw(&s3, &bucket, &format!("cdkd/{s}/{REGION}/state.json"), body).await;
    }
    bucket
}

/// Every object outside the runs' prefix, with its body: what a dry run leaves alone.
async fn state_objects(bucket: &str) -> Vec<(String, Vec<u8>)> {
    let s3 = h::s3().await;
    let mut out = Vec::new();
    for k in h::list_all_keys(&s3, bucket).await {
        if !k.starts_with("cdkd/_runs/") {
            let body = h::get_raw(&s3, bucket, &k).await.map(|b| b.0);
            out.push((k, body.unwrap_or_default()));
        }
    }
    out
}

fn cli(bucket: &str, args: &[&str]) -> h::CliRun {
    let mut all = vec!["--state-bucket", bucket];
    all.extend_from_slice(args);
    crate::run_cli_env(&all, &[])
}

use cdkd_tests::cfn::client as cfn;

async fn cfn_stack_exists(name: &str) -> bool {
    cdkd_tests::cfn::described(name).await.is_some()
}

/// `export ExportNested --cdk-out <fixture> --dry-run --local --run-id <id> <extra>`.
fn export_nested(bucket: &str, run_id: &str, extra: &[&str]) -> h::CliRun {
    let out = fixture("nested.out");
    let mut args = vec!["--cdk-out", &out, "--dry-run"];
    args.extend_from_slice(extra);
    export_tree(bucket, run_id, &args)
}

/// `export ExportNested <args> --local --run-id <id>`.
fn export_tree(bucket: &str, run_id: &str, args: &[&str]) -> h::CliRun {
    let mut all = vec!["export", NESTED];
    all.extend_from_slice(args);
    all.extend(["--local", "--run-id", run_id]);
    cli(bucket, &all)
}

/// The three-level tree's records in a fresh bucket, and what is in it.
async fn seeded_tree() -> (String, Vec<(String, Vec<u8>)>) {
    let bucket = seeded(&[NESTED, MIDDLE, LEAF]).await;
    let before = state_objects(&bucket).await;
    (bucket, before)
}

/// Nothing written to `bucket` outside the runs' prefix since `before` (no record or
/// lock), no CloudFormation stack of the three-level tree (its destination names: the
/// cdkd names with `~` replaced by `-`).
async fn assert_tree_untouched(bucket: &str, before: &[(String, Vec<u8>)]) {
    assert_eq!(
        state_objects(bucket).await,
        before,
        "no record or lock written"
    );
    for name in [NESTED, &MIDDLE.replace('~', "-"), &LEAF.replace('~', "-")] {
        assert!(!cfn_stack_exists(name).await, "{name}");
    }
}

/// `export ExportFlat --dry-run --local --run-id <id> --template <template> <extra>`.
fn export_flat(bucket: &str, run_id: &str, template: &str, extra: &[&str]) -> h::CliRun {
    let mut args = vec!["export", FLAT, "--dry-run", "--local", "--run-id", run_id];
    args.extend(["--template", template]);
    args.extend_from_slice(extra);
    cli(bucket, &args)
}

#[tokio::test]
async fn export_dry_run_local_flat_template_prints_the_plan_and_changes_nothing() {
    let bucket = seeded(&[FLAT]).await;
    let before = state_objects(&bucket).await;
    let run_id = uniq("export-flat");
    let template = fixture("flat.template.json");
    let r = export_flat(&bucket, &run_id, &template, &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains(&format!(
            "export {FLAT}: run {run_id}, 1 template(s) uploaded"
        )),
        "{r:?}"
    );
    insta::assert_snapshot!(r.stdout);
    // Nothing but the run's own artifacts was written: no lock, no record changed.
    assert_eq!(state_objects(&bucket).await, before);
    assert!(!cfn_stack_exists(FLAT).await);
}

#[tokio::test]
async fn export_dry_run_local_yaml_template_plans_like_the_json_one() {
    let bucket = seeded(&[FLAT]).await;
    let (json_run, yaml_run) = (uniq("export-json"), uniq("export-yaml"));
    let (json_t, yaml_t) = (fixture("flat.template.json"), fixture("flat.template.yaml"));
    let j = export_flat(&bucket, &json_run, &json_t, &["--json"]);
    let y = export_flat(&bucket, &yaml_run, &yaml_t, &["--json"]);
    assert_eq!((j.code, y.code), (0, 0), "{j:?}\n{y:?}");
    let strip_keys = |s: &str, run: &str| s.replace(run, "<run>");
    assert_eq!(
        strip_keys(&j.stdout, &json_run),
        strip_keys(&y.stdout, &yaml_run)
    );
}

#[tokio::test]
async fn export_dry_run_local_three_level_cloud_assembly_plans_leaf_first() {
    let (bucket, before) = seeded_tree().await;
    let run_id = uniq("export-nested");
    let r = export_nested(&bucket, &run_id, &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("3 template(s) uploaded"), "{r:?}");
    insta::assert_snapshot!(r.stdout);
    assert_tree_untouched(&bucket, &before).await;
    // The plan is shown, and the dry run says a real run of this tree is refused.
    assert!(
        r.stderr.contains(&format!(
            "warning: a real run would be refused: export of {NESTED}: its nested stack {MIDDLE} has nested stacks of its own; CloudFormation imports only one level of nesting"
        )),
        "{r:?}"
    );
}

/// Statement 86's tree (three levels) cannot be imported: CloudFormation's resource import
/// takes one level of nesting only (it neither imports into a child stack nor adopts a
/// stack that has children), so a real run is refused after the plan, before the
/// question, any lock or any change set (docs/export.md, "The lock (export-lock)").
#[tokio::test]
async fn export_statement_86_a_three_level_tree_is_refused_before_any_lock_or_change_set() {
    let (bucket, before) = seeded_tree().await;
    let run_id = uniq("export-deep");
    let out = fixture("nested.out");
    let r = export_tree(&bucket, &run_id, &["--cdk-out", &out, "--fast", "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains(&format!(
            "export of {NESTED}: its nested stack {MIDDLE} has nested stacks of its own; CloudFormation imports only one level of nesting"
        )),
        "{r:?}"
    );
    assert_tree_untouched(&bucket, &before).await;
    let keys = h::list_all_keys(&h::s3().await, &bucket).await;
    assert!(
        !keys
            .iter()
            .any(|k| k.starts_with(&format!("cdkd/_runs/{run_id}/progress"))),
        "no migrating run was started: {keys:?}"
    );
}

#[tokio::test]
async fn export_dry_run_json_is_the_plan_file_and_the_templates_are_uploaded_as_json() {
    let bucket = seeded(&[NESTED, MIDDLE, LEAF]).await;
    let run_id = uniq("export-json");
    let r = export_nested(&bucket, &run_id, &["--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    let printed: Value = serde_json::from_str(&r.stdout).expect("--json prints JSON");
    let s3 = h::s3().await;
    let stored = h::get_text(&s3, &bucket, &format!("cdkd/_runs/{run_id}/plan.json"))
        .await
        .expect("plan.json");
    let stored: Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(printed, stored);
    let stacks: Vec<&str> = printed["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stack"].as_str().unwrap())
        .collect();
    assert_eq!(stacks, [LEAF, MIDDLE, NESTED], "leaf first");
    for s in printed["stacks"].as_array().unwrap() {
        for field in [
            "region",
            "cfnStackName",
            "import",
            "phase2",
            "nested",
            "blocked",
            "warnings",
        ] {
            assert!(s.get(field).is_some(), "{field} in {s}");
        }
    }
    // Every template read was uploaded as JSON under the run's prefix, the key the plan names.
    for s in printed["stacks"].as_array().unwrap() {
        let key = s["templateKey"].as_str().unwrap();
        assert!(
            key.starts_with(&format!("cdkd/_runs/{run_id}/templates/")),
            "{key}"
        );
        let body = h::get_text(&s3, &bucket, key).await.expect(key);
        let t: Value = serde_json::from_str(&body).expect("uploaded as JSON");
        assert!(t["Resources"].is_object(), "{key}");
    }
}

#[tokio::test]
async fn export_without_dry_run_and_without_a_terminal_needs_yes_and_changes_nothing() {
    let bucket = seeded(&[FLAT]).await;
    let before = state_objects(&bucket).await;
    let template = fixture("flat.template.json");
    let r = cli(
        &bucket,
        &["export", FLAT, "--template", &template, "--local"],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("pass -y"), "{r:?}");
    assert!(
        r.stdout.contains("Migration: phase 1 imports"),
        "the plan is shown first: {r:?}"
    );
    assert_eq!(
        state_objects(&bucket).await,
        before,
        "no lock, no record change"
    );
    assert!(!cfn_stack_exists(FLAT).await, "no change set was submitted");
}

#[tokio::test]
async fn export_needs_exactly_one_template_source() {
    let r = crate::run_cli_env(&["export", FLAT, "--dry-run"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("--template"), "{r:?}");
    let (t, o) = (fixture("flat.template.json"), fixture("nested.out"));
    let r = crate::run_cli_env(
        &[
            "export",
            FLAT,
            "--dry-run",
            "--template",
            &t,
            "--cdk-out",
            &o,
        ],
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
}

#[tokio::test]
async fn export_dry_run_refuses_an_existing_destination_stack_by_name() {
    let bucket = seeded(&[FLAT]).await;
    let dest = uniq("ExportDest");
    cfn()
        .await
        .create_stack()
        .stack_name(&dest)
        .template_body(r#"{"Resources":{"T":{"Type":"AWS::SNS::Topic"}}}"#)
        .send()
        .await
        .expect("CreateStack");
    let before = state_objects(&bucket).await;
    let template = fixture("flat.template.json");
    let run_id = uniq("export-dest");
    let r = export_flat(&bucket, &run_id, &template, &["--cfn-stack-name", &dest]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains(&format!("export {FLAT} refused")),
        "{r:?}"
    );
    assert!(r.stderr.contains(&dest), "{r:?}");
    assert_eq!(r.stdout, "", "no plan to print");
    assert_eq!(state_objects(&bucket).await, before);
}

#[tokio::test]
async fn export_dry_run_without_a_record_is_refused_naming_the_stack() {
    let bucket = seeded(&[]).await;
    let template = fixture("flat.template.json");
    let run_id = uniq("export-none");
    let r = export_flat(&bucket, &run_id, &template, &[]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains(&format!("export {FLAT} refused")),
        "{r:?}"
    );
    assert!(r.stderr.contains(FLAT), "{r:?}");
}

#[tokio::test]
async fn export_dry_run_with_a_blocked_row_prints_the_plan_ending_in_the_refusal() {
    // A template resource the record does not hold is blocked: the summary names it
    // and the command exits 1.
    let bucket = seeded(&[FLAT]).await;
    let mut t: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("flat.template.json")).unwrap())
            .unwrap();
    t["Resources"]["Unrecorded"] = serde_json::json!({"Type": "AWS::SNS::Topic"});
    let dir = std::env::temp_dir().join(uniq("cdkd-flow-export"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("blocked.template.json");
    std::fs::write(&path, t.to_string()).unwrap();
    let run_id = uniq("export-blocked");
    let p = path.to_string_lossy().into_owned();
    let r = export_flat(&bucket, &run_id, &p, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("Unrecorded"), "{r:?}");
    let last = r
        .stdout
        .trim_end()
        .lines()
        .last()
        .unwrap_or_default()
        .to_string();
    assert!(!last.starts_with("Dry run:"), "{}", r.stdout);
    // The refusal is a failure line on stderr too.
    assert!(
        r.stderr
            .lines()
            .any(|l| l.starts_with(&format!("error: export {FLAT} refused: "))),
        "{r:?}"
    );
}

/// Statement 73 (docs/export.md, "Cross-stack consumers"): another stack of the app reads ExportFlat's
/// outputs through `Fn::GetStackOutput`. A dry run warns listing each read; a real run
/// with `--strict-cross-stack` is refused before anything is uploaded or locked.
#[tokio::test]
async fn export_statement_73_cross_stack_consumers_warn_and_strict_cross_stack_refuses() {
    let bucket = seeded(&[FLAT]).await;
    let before = h::list_all_keys(&h::s3().await, &bucket).await;
    let out = fixture("consumer.out");
    let run_id = uniq("export-consumers");
    let r = cli(
        &bucket,
        &[
            "export",
            FLAT,
            "--cdk-out",
            &out,
            "--dry-run",
            "--local",
            "--run-id",
            &run_id,
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains("warning: other stacks read the outputs of ExportFlat (ExportReader \u{2192} ExportFlat.QueueArn at Resources.ReaderQueue.Properties.Tags[0].Value; ExportReader \u{2192} ExportFlat.TopicArn at Resources.ReaderParameter.Properties.Value.Fn::Join[1][0])"),
        "{r:?}"
    );
    let r = cli(
        &bucket,
        &[
            "export",
            FLAT,
            "--cdk-out",
            &out,
            "--local",
            "-y",
            "--strict-cross-stack",
            "--run-id",
            &uniq("export-strict"),
        ],
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("refused under --strict-cross-stack: nothing was changed")
            && r.stderr.contains("ExportReader \u{2192} ExportFlat.QueueArn at Resources.ReaderQueue.Properties.Tags[0].Value"),
        "{r:?}"
    );
    let after = h::list_all_keys(&h::s3().await, &bucket).await;
    let new: Vec<_> = after
        .iter()
        .filter(|k| !before.contains(k) && !k.contains(&run_id))
        .collect();
    assert!(new.is_empty(), "the refused run wrote {new:?}");
    assert!(!cfn_stack_exists(FLAT).await);
}

/// `export <stack> --template <t> --local [--fast] --run-id <id>` (no -y, no --dry-run)
/// on a terminal, answering `answer` to the confirmation.
fn export_on_terminal(s: &RealStack, run_id: &str, answer: &str) -> crate::pty::PtyRun {
    let question = format!("delete the cdkd record of {} afterwards? [y/N]", s.stack);
    crate::pty::run_on_pty(
        &s.export_args(run_id, &[]),
        &question,
        answer,
        crate::pty::Timeouts::default(),
    )
}

/// Statement 72 (docs/export.md, "Checks", F5): the confirmation declined on a terminal. The
/// question comes after the plan and before the lock (the migrating run takes it), so:
/// exit 0, the record byte for byte as it was, no lock object, no CloudFormation stack,
/// no migrating run (nothing under the run's prefix but the templates uploaded for the
/// plan), the resources untouched.
#[tokio::test]
async fn export_statement_72_declining_the_confirmation_exits_0_releases_the_lock_and_changes_nothing(
) {
    let s = real_stack("ExportDecline").await;
    let s3 = h::s3().await;
    let record = h::get_raw(&s3, &s.bucket, &s.state_key()).await.unwrap().0;
    let before = state_objects(&s.bucket).await;
    let run_id = uniq("export-decline");
    let r = export_on_terminal(&s, &run_id, "n\n");
    assert!(r.asked, "the confirmation is asked on a terminal: {r:?}");
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains("Migration: phase 1 imports"),
        "the plan is shown before the question: {r:?}"
    );
    assert!(
        r.terminal.contains(&format!(
            "export {}: cancelled; nothing was changed",
            s.stack
        )),
        "{r:?}"
    );
    let after = h::get_raw(&s3, &s.bucket, &s.state_key()).await;
    assert_eq!(
        after.map(|a| a.0),
        Some(record),
        "the record is byte-identical"
    );
    assert_eq!(
        state_objects(&s.bucket).await,
        before,
        "nothing else written"
    );
    let keys = h::list_all_keys(&s3, &s.bucket).await;
    assert!(
        !keys.iter().any(|k| k.ends_with("lock.json")),
        "no lock left: {keys:?}"
    );
    // The plan run (<run>-plan), the templates it read and the plan it wrote into the
    // run's folder; no migrating run.
    let plan_prefix = format!("cdkd/_runs/{run_id}-plan/");
    let templates = format!("cdkd/_runs/{run_id}/templates/");
    let plan = format!("cdkd/_runs/{run_id}/plan.json");
    let other: Vec<_> = keys
        .iter()
        .filter(|k| k.starts_with("cdkd/_runs/"))
        .filter(|k| !k.starts_with(&plan_prefix) && !k.starts_with(&templates) && **k != plan)
        .collect();
    assert!(other.is_empty(), "no run was started: {other:?}");
    assert!(!cfn_stack_exists(&s.stack).await, "no CloudFormation stack");
    let sdk = h::sdk().await;
    assert!(aws_sdk_sqs::Client::new(&sdk)
        .get_queue_attributes()
        .queue_url(&s.queue_url)
        .send()
        .await
        .is_ok());
    assert!(aws_sdk_sns::Client::new(&sdk)
        .get_topic_attributes()
        .topic_arn(&s.topic_arn)
        .send()
        .await
        .is_ok());
}

/// The same question answered `y` on the terminal: the migration runs (the answer
/// reaches the CLI through the terminal), the stack lands in CloudFormation and the
/// record and its lock are gone.
#[tokio::test]
async fn export_confirmed_on_a_terminal_migrates_the_stack() {
    let s = real_stack("ExportConfirm").await;
    let run_id = uniq("export-confirm");
    let r = export_on_terminal(&s, &run_id, "y\n");
    assert!(r.asked, "{r:?}");
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.terminal
            .contains(&format!("export {}: migrating (run {run_id})", s.stack)),
        "{r:?}"
    );
    assert!(r.stdout.contains("migrated; cdkd record deleted"), "{r:?}");
    let resources = cfn()
        .await
        .describe_stack_resources()
        .stack_name(&s.stack)
        .send()
        .await
        .expect("the CloudFormation stack exists");
    let queue = resources
        .stack_resources()
        .iter()
        .find(|r| r.logical_resource_id() == Some("WorkQueue"))
        .and_then(|r| r.physical_resource_id());
    assert_eq!(queue, Some(s.queue_url.as_str()));
    let keys = h::list_all_keys(&h::s3().await, &s.bucket).await;
    assert!(!keys.contains(&s.state_key()), "record deleted: {keys:?}");
    assert!(
        !keys.iter().any(|k| k.ends_with("lock.json")),
        "lock released: {keys:?}"
    );
}

/// Statement 3 (docs/export.md, "Checks", S2): `--template` without a stack name is refused as
/// a usage error (exit 2), in one line, before anything reaches AWS (the bucket named
/// does not exist).
#[tokio::test]
async fn export_statement_3_a_template_without_a_stack_name_is_refused() {
    let template = fixture("flat.template.json");
    let bucket = h::unique_bucket_name("absent");
    let r = cli(
        &bucket,
        &["export", "--template", &template, "--dry-run", "--local"],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("--template needs the name of the stack to export"),
        "{r:?}"
    );
    assert_eq!(r.stderr.trim_end().lines().count(), 1, "one line: {r:?}");
    assert_eq!(r.stdout, "", "{r:?}");
}

/// Statement 4 (docs/export.md, "Checks", S2): a YAML body in a `.txt` file is read as YAML
/// (the format is told by the content, not the name), uploaded as the same JSON template
/// the JSON file gives, and planned the same.
#[tokio::test]
async fn export_statement_4_a_yaml_body_in_a_txt_file_is_read_as_yaml() {
    let bucket = seeded(&[FLAT]).await;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(uniq("export_cli-txt"));
    std::fs::create_dir_all(&dir).unwrap();
    let txt = dir.join("flat.template.txt");
    std::fs::copy(fixtures().join("flat.template.yaml"), &txt).unwrap();
    let txt = txt.to_string_lossy().into_owned();
    let json_t = fixture("flat.template.json");
    let (txt_run, json_run) = (uniq("export-txt"), uniq("export-json"));
    let t = export_flat(&bucket, &txt_run, &txt, &["--json"]);
    let j = export_flat(&bucket, &json_run, &json_t, &["--json"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!((t.code, j.code), (0, 0), "{t:?}\n{j:?}");
    assert!(
        t.stderr.contains(&format!("  {FLAT}: {txt} (YAML)")),
        "read as YAML: {t:?}"
    );
    assert_eq!(
        t.stdout.replace(&txt_run, "<run>"),
        j.stdout.replace(&json_run, "<run>"),
        "the same plan"
    );
    let s3 = h::s3().await;
    let uploaded = |run: &str| {
        let key = format!("cdkd/_runs/{run}/templates/{FLAT}.json");
        let s3 = s3.clone();
        let bucket = bucket.clone();
        async move {
            let body = h::get_text(&s3, &bucket, &key).await.expect(&key);
            serde_json::from_str::<Value>(&body).expect("uploaded as JSON")
        }
    };
    assert_eq!(uploaded(&txt_run).await, uploaded(&json_run).await);
}

/// Statement 5 (docs/export.md, "Checks", S2): a cloud assembly (`--cdk-out`, and an app run
/// by `--app`) with two stacks and no stack name is refused as a usage error (exit 2)
/// in one line listing both stacks; nothing is uploaded.
#[tokio::test]
async fn export_statement_5_an_app_with_two_stacks_and_no_stack_name_is_refused_listing_both() {
    let bucket = seeded(&[FLAT]).await;
    let before = h::list_all_keys(&h::s3().await, &bucket).await;
    let out = fixture("consumer.out");
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let app = format!("cp -R {}/. \"$CDK_OUTDIR\"", quote(&out));
    for source in [["--cdk-out", out.as_str()], ["--app", app.as_str()]] {
        let mut args = vec!["export", "--dry-run", "--local"];
        args.extend(source);
        let r = cli(&bucket, &args);
        assert_eq!(r.code, 2, "{source:?}: {r:?}");
        assert!(
            r.stderr
                .contains("has several stacks (ExportFlat, ExportReader)")
                && r.stderr.contains("name the one to export"),
            "{source:?}: {r:?}"
        );
        assert_eq!(r.stderr.trim_end().lines().count(), 1, "one line: {r:?}");
        if let Some(kept) = r.stderr.split("is kept at ").nth(1) {
            let _ = std::fs::remove_dir_all(kept.trim_end().trim_end_matches(')'));
        }
    }
    assert_eq!(h::list_all_keys(&h::s3().await, &bucket).await, before);
}

/// Without a stack name, an assembly holding one stack exports that stack.
#[tokio::test]
async fn export_without_a_stack_name_exports_the_only_stack_of_the_assembly() {
    let bucket = seeded(&[NESTED, MIDDLE, LEAF]).await;
    let out = fixture("nested.out");
    let run_id = uniq("export-unnamed");
    let r = cli(
        &bucket,
        &[
            "export",
            "--cdk-out",
            &out,
            "--dry-run",
            "--local",
            "--run-id",
            &run_id,
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains(&format!("export {NESTED}: run {run_id}")),
        "{r:?}"
    );
    let plan: Value = serde_json::from_str(&r.stdout).expect("the plan");
    let last = plan["stacks"].as_array().and_then(|s| s.last()).cloned();
    assert_eq!(last.map(|s| s["stack"].clone()), Some(Value::from(NESTED)));
}

/// Statement 81 (docs/export.md, "Checks", N4): a nested stack exported from its lone template
/// (`--template` follows no nested template) is refused: its child has a record but no
/// template path. Nothing is locked or changed, no CloudFormation stack is created.
#[tokio::test]
async fn export_statement_81_a_nested_export_from_a_lone_template_is_refused() {
    let (bucket, before) = seeded_tree().await;
    let template = fixture("nested.out/ExportNested.template.json");
    let run_id = uniq("export-lone");
    let r = export_tree(&bucket, &run_id, &["--template", &template, "--dry-run"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains(&format!("export {NESTED} refused")),
        "{r:?}"
    );
    assert!(
        r.stderr.contains(&format!(
            "nested stack {MIDDLE} has a state record but no template: a lone --template carries no nested template, so export from the cloud assembly (--cdk-out or --app)"
        )),
        "{r:?}"
    );
    assert!(
        r.stderr.contains(&format!("warning: {NESTED} has nested stacks (MiddleNestedStackMiddleNestedStackResource9C3D5E7F) and --template reads no nested template")),
        "the CLI says why before planning: {r:?}"
    );
    assert_tree_untouched(&bucket, &before).await;
}
