//! End-to-end: an interrupted or contested export (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"),
//! through the real binary on the emulator. A local export killed (SIGKILL) after its
//! IMPORT executed is resumed by the same command; a second export while the first runs
//! is refused naming the run and the watch command; a lock held by anyone else refuses
//! before planning; a destination stack that is nobody's run is refused without advice
//! to delete it. The crash test kills the export at seeded random points and resumes it.
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-flow --test e2e -- --test-threads=1 export_resume_cli`.
//! More seeds: `CDKD_FLOW_CRASH_SEEDS=200` (`make crash-export`).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use cdkd_tests as h;
use serde_json::{json, Value};

use crate::export_run_cli::{make_resources, record, seeded, template, uniq, write_template, Made};
use cdkd_tests::cfn::{client as cfn, stack_resources};

const REGION: &str = "us-east-1";

fn export_args<'a>(bucket: &'a str, stack: &'a str, tpl: &'a str, fast: bool) -> Vec<&'a str> {
    let mut v = vec![
        "--state-bucket",
        bucket,
        "export",
        stack,
        "--template",
        tpl,
        "--local",
        "-y",
    ];
    if fast {
        v.push("--fast");
    }
    v
}

fn spawn_export(bucket: &str, stack: &str, tpl: &Path, fast: bool) -> Child {
    let tpl = tpl.to_string_lossy();
    crate::cli_command(&export_args(bucket, stack, &tpl, fast))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cdkd-flow")
}

fn run_export(bucket: &str, stack: &str, tpl: &Path, fast: bool) -> h::CliRun {
    let tpl = tpl.to_string_lossy();
    crate::run_cli_env(&export_args(bucket, stack, &tpl, fast), &[])
}

/// The progress.json of the bucket's one export run (not the plan run's), when written.
async fn progress(s3: &aws_sdk_s3::Client, bucket: &str) -> Option<Value> {
    let keys = h::list_all_keys(s3, bucket).await;
    let key = keys
        .iter()
        .find(|k| k.ends_with("/progress.json") && !k.contains("-plan/"))?;
    let (body, _) = h::get_raw(s3, bucket, key).await?;
    serde_json::from_slice(&body).ok()
}

/// The resources of a flat test stack, by logical id, as they exist in the emulator.
async fn live(m: &Made) -> BTreeMap<&'static str, bool> {
    let sdk = h::sdk().await;
    let q = h::fixtures::queue_exists(&sdk, &m.queue_url).await;
    let t = h::fixtures::topic_exists(&sdk, &m.topic_arn).await;
    let p = h::fixtures::parameter_exists(&sdk, &m.param).await;
    BTreeMap::from([("WorkQueue", q), ("AlertsTopic", t), ("QueueUrlParam", p)])
}

/// What owns each resource at an observation point: the cdkd record (its rows), the
/// CloudFormation stack (its resources).
async fn owners(bucket: &str, stack: &str) -> (Vec<String>, BTreeMap<String, String>) {
    let s3 = h::s3().await;
    let rows = match h::get_raw(&s3, bucket, &format!("cdkd/{stack}/{REGION}/state.json")).await {
        Some((body, _)) => serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| {
                v["resources"]
                    .as_object()
                    .map(|o| o.keys().cloned().collect())
            })
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let exists = cfn()
        .await
        .describe_stacks()
        .stack_name(stack)
        .send()
        .await
        .is_ok();
    let in_cfn = if exists {
        stack_resources(stack).await
    } else {
        BTreeMap::new()
    };
    (rows, in_cfn)
}

/// Every resource still exists and is owned by the record or the stack (never by
/// neither); where the stack holds it, it holds the very physical id the record named.
async fn assert_owned(bucket: &str, stack: &str, m: &Made, when: &str) {
    let alive = live(m).await;
    assert!(
        alive.values().all(|a| *a),
        "{when}: a resource was deleted: {alive:?}"
    );
    let (rows, in_cfn) = owners(bucket, stack).await;
    for id in ["WorkQueue", "AlertsTopic", "QueueUrlParam"] {
        assert!(
            rows.iter().any(|r| r == id) || in_cfn.contains_key(id),
            "{when}: {id} is owned by neither the record ({rows:?}) nor the stack ({in_cfn:?})"
        );
    }
    if let Some(q) = in_cfn.get("WorkQueue") {
        assert_eq!(q, &m.queue_url, "{when}");
    }
}

/// After the run completed: CloudFormation alone owns every resource, the record and
/// every lock are gone, report.json says migrated.
async fn assert_migrated(bucket: &str, stack: &str, m: &Made, when: &str) {
    assert_owned(bucket, stack, m, when).await;
    let (rows, in_cfn) = owners(bucket, stack).await;
    assert!(rows.is_empty(), "{when}: the record is left: {rows:?}");
    assert_eq!(in_cfn.len(), 3, "{when}: {in_cfn:?}");
    let s3 = h::s3().await;
    let keys = h::list_all_keys(&s3, bucket).await;
    assert!(
        !keys.iter().any(|k| k.ends_with("lock.json")),
        "{when}: a lock is left: {keys:?}"
    );
    let report = keys
        .iter()
        .find(|k| k.ends_with("/report.json") && !k.contains("-plan/"))
        .unwrap_or_else(|| panic!("{when}: no report.json: {keys:?}"));
    let (body, _) = h::get_raw(&s3, bucket, report).await.unwrap();
    let report: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(report["outcome"], "migrated", "{when}: {report}");
}

struct Flat {
    stack: String,
    bucket: String,
    m: Made,
    tpl: std::path::PathBuf,
}

async fn flat(tag: &str) -> Flat {
    let stack = uniq(tag);
    let m = make_resources(&stack.to_lowercase()).await;
    let bucket = seeded(&stack, &record(&stack, &m)).await;
    let tpl = write_template(&stack, &template(&m));
    Flat {
        stack,
        bucket,
        m,
        tpl,
    }
}

/// This host's name as the CLI reads it (`HOSTNAME`, else `/etc/hostname`).
pub(crate) fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.trim().is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
        })
        .unwrap_or_else(|| "host".into())
}

/// A pid that no process has any more.
pub(crate) fn dead_pid() -> u32 {
    let mut c = std::process::Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

/// A process of this host that looks like a cdkd-flow run (its command line says so)
/// and lives until killed.
fn live_lookalike() -> Child {
    std::process::Command::new("bash")
        .args(["-c", "exec -a cdkd-flow sleep 120"])
        .spawn()
        .unwrap()
}

/// What a local export killed right after its phase-1 IMPORT completed leaves, made
/// deterministically: the export's steps run in this process as a local run of process
/// `pid` on this host (its locks name them) up to the import, then stop. Returns the
/// run's id.
async fn interrupted_after_import(f: &Flat, pid: u32) -> String {
    use cdkd_core::export::execute::Next;
    use cdkd_functions::deps::LocalProcess;
    let s3 = h::s3().await;
    let run_id = format!("export-{}-{}", f.stack, h::now_ms());
    let tpl_key = format!("cdkd/_runs/{run_id}/templates/{}.json", f.stack);
    let body = std::fs::read(&f.tpl).unwrap();
    h::put_raw(&s3, &f.bucket, &tpl_key, body).await;
    let mut deps = cdkd_functions::Deps::from_sdk(h::sdk().await, None).await;
    deps.local = Some(LocalProcess {
        host: host_name(),
        pid,
    });
    let input = json!({"stack": f.stack, "stateBucket": f.bucket, "statePrefix": "cdkd",
        "templates": {f.stack.clone(): tpl_key}, "options": {"fast": true}, "dryRun": false});
    let step = |name: &'static str, payload: Value| {
        let deps = deps.clone();
        async move {
            cdkd_functions::steps::invoke(name, payload, &deps)
                .await
                .unwrap_or_else(|e| panic!("{name}: {e:?}"))
        }
    };
    let plan = step("export-plan", json!({"input": input, "runId": run_id})).await;
    let mut carry = step(
        "export-lock",
        json!({"input": input, "runId": run_id, "plan": plan}),
    )
    .await;
    for _ in 0..20 {
        let p = progress(&s3, &f.bucket).await;
        if p.as_ref().and_then(|p| p["stacks"][0]["stage"].as_str()) == Some("imported") {
            return run_id;
        }
        let next: Next = serde_json::from_value(carry["next"].clone()).unwrap();
        let name = match next {
            Next::Wait => "export-poll",
            Next::Execute => "export-execute",
            Next::Import => "export-import",
            other => panic!("the import did not complete first: {other:?}"),
        };
        carry = step(name, carry).await;
    }
    panic!("the import did not complete");
}

fn kill(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test]
async fn same_command_same_run_resumes_an_export_killed_after_its_import_executed() {
    let f = flat("Resume").await;
    let run_id = interrupted_after_import(&f, dead_pid()).await;
    assert_owned(&f.bucket, &f.stack, &f.m, "after the kill").await;
    // The stack says it is this record's run.
    let d = cfn()
        .await
        .describe_stacks()
        .stack_name(&f.stack)
        .send()
        .await
        .unwrap();
    let tags: BTreeMap<_, _> = d.stacks()[0]
        .tags()
        .iter()
        .map(|t| {
            (
                t.key().unwrap_or_default().to_string(),
                t.value().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(tags.get("cdkd-flow:record"), Some(&f.stack), "{tags:?}");
    assert_eq!(tags.get("cdkd-flow:run"), Some(&run_id), "{tags:?}");

    let again = run_export(&f.bucket, &f.stack, &f.tpl, true);
    assert_eq!(
        again.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        again.stdout, again.stderr
    );
    assert!(
        again
            .stderr
            .contains(&format!("run {run_id} was interrupted")),
        "{}",
        again.stderr
    );
    assert!(
        again.stderr.contains(&format!("resuming run {run_id}")),
        "{}",
        again.stderr
    );
    assert!(!again.stderr.contains("already exists"), "{}", again.stderr);
    // The killed process's lock is this run's own and has not expired: the takeover says
    // so (docs/state-and-lock.md, "Checks" statement 50).
    assert!(
        again.stderr.contains(&format!(
            "Took over this run's own lock for stack: {} (us-east-1)",
            f.stack
        )),
        "{}",
        again.stderr
    );
    assert!(!again.stderr.contains("EXPIRED"), "{}", again.stderr);
    assert_migrated(&f.bucket, &f.stack, &f.m, "after the resume").await;
}

#[tokio::test]
async fn same_command_same_run_asks_before_resuming_and_a_no_changes_nothing() {
    let f = flat("ResumeAsk").await;
    interrupted_after_import(&f, dead_pid()).await;
    // No -y and no terminal: a usage error that says how to resume, nothing changed.
    let tpl = f.tpl.to_string_lossy();
    let run = crate::run_cli_env(
        &[
            "--state-bucket",
            &f.bucket,
            "export",
            &f.stack,
            "--template",
            &tpl,
            "--local",
            "--fast",
        ],
        &[],
    );
    assert_eq!(
        run.code, 2,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(run.stderr.contains("pass -y to resume"), "{}", run.stderr);
    assert_owned(&f.bucket, &f.stack, &f.m, "after the refused resume").await;
    // A dry run says what the real command does, and plans nothing.
    let dry = crate::run_cli_env(
        &[
            "--state-bucket",
            &f.bucket,
            "export",
            &f.stack,
            "--template",
            &tpl,
            "--local",
            "--dry-run",
        ],
        &[],
    );
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(dry.stderr.contains("resumes run"), "{}", dry.stderr);
    let again = run_export(&f.bucket, &f.stack, &f.tpl, true);
    assert_eq!(
        again.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        again.stdout, again.stderr
    );
    assert_migrated(&f.bucket, &f.stack, &f.m, "after the resume").await;
}

#[tokio::test]
async fn dead_or_alive_a_live_runs_lock_is_never_taken_over_and_the_refusal_names_the_watch_command(
) {
    let f = flat("ResumeLive").await;
    // The run's process is alive: a cdkd-flow process of this host.
    let live = live_lookalike();
    let run_id = interrupted_after_import(&f, live.id()).await;
    let second = run_export(&f.bucket, &f.stack, &f.tpl, true);
    assert_eq!(
        second.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        second.stdout, second.stderr
    );
    assert!(
        second
            .stderr
            .contains(&format!("run {run_id} is exporting it now")),
        "{}",
        second.stderr
    );
    assert!(
        second
            .stderr
            .contains(&format!("cdkd-flow runs watch {run_id} --local")),
        "{}",
        second.stderr
    );
    assert!(
        second.stderr.contains("last step: poll"),
        "{}",
        second.stderr
    );
    let lower = second.stderr.to_lowercase();
    assert!(
        !lower.contains("delete") && !lower.contains("force-unlock"),
        "{}",
        second.stderr
    );
    assert_owned(&f.bucket, &f.stack, &f.m, "after the refusal").await;
    // Once that process is gone, the same command resumes the run.
    kill(live);
    let again = run_export(&f.bucket, &f.stack, &f.tpl, true);
    assert_eq!(
        again.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        again.stdout, again.stderr
    );
    assert!(
        again.stderr.contains(&format!("resuming run {run_id}")),
        "{}",
        again.stderr
    );
    assert_migrated(&f.bucket, &f.stack, &f.m, "after the resume").await;
}

#[tokio::test]
async fn export_reads_the_lock_first_a_cdkd_deploy_refuses_before_planning() {
    let f = flat("ResumeLocked").await;
    let s3 = h::s3().await;
    let lock = json!({"owner": "alice@laptop:42", "timestamp": h::now_ms(), "expiresAt": h::now_ms() + 600_000, "operation": "deploy"});
    h::put_raw(
        &s3,
        &f.bucket,
        &format!("cdkd/{}/{REGION}/lock.json", f.stack),
        serde_json::to_vec(&lock).unwrap(),
    )
    .await;
    let run = run_export(&f.bucket, &f.stack, &f.tpl, true);
    assert_eq!(
        run.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stderr.contains("refused before planning"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("alice@laptop:42") && run.stderr.contains("deploy"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("cdkd-flow force-unlock"),
        "{}",
        run.stderr
    );
    let keys = h::list_all_keys(&s3, &f.bucket).await;
    assert!(
        !keys.iter().any(|k| k.contains("/_runs/")),
        "nothing planned or uploaded: {keys:?}"
    );
}

#[tokio::test]
async fn no_message_advises_deleting_a_stack_that_is_nobodys_run() {
    let f = flat("ResumeForeign").await;
    // A stack of the destination's name that no run of this record created.
    cfn()
        .await
        .create_stack()
        .stack_name(&f.stack)
        .template_body(r#"{"Resources":{"T":{"Type":"AWS::SNS::Topic"}}}"#)
        .send()
        .await
        .unwrap();
    let run = run_export(&f.bucket, &f.stack, &f.tpl, true);
    assert_eq!(
        run.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(run.stderr.contains("no export run of"), "{}", run.stderr);
    assert!(run.stderr.contains("--cfn-stack-name"), "{}", run.stderr);
    assert!(
        !run.stderr.to_lowercase().contains("delete"),
        "{}",
        run.stderr
    );
    assert_owned(&f.bucket, &f.stack, &f.m, "after the refusal").await;
}

/// The phase a run was killed in, from its progress.json (`planning` before it).
fn phase_of(p: &Option<Value>) -> String {
    let Some(p) = p else {
        return "planning".into();
    };
    let stage = p["stacks"][0]["stage"].as_str().unwrap_or("?").to_string();
    let last = p["log"]
        .as_array()
        .and_then(|l| l.last())
        .and_then(Value::as_str)
        .map(|l| l.split(':').next().unwrap_or("").to_string())
        .unwrap_or_default();
    format!("{stage}/{last}")
}

/// The crash test: seeded random kill points across every phase of a
/// flat export, then the same command again. Every observation keeps every resource
/// alive and owned; every resume migrates; no lock is left.
#[tokio::test]
async fn crash_export_killed_at_seeded_random_points_resumes_with_nothing_lost() {
    let seeds: u64 = std::env::var("CDKD_FLOW_CRASH_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    // How long an uninterrupted --fast export takes here: kills are spread over it.
    let calib = flat("CrashCal").await;
    let t0 = Instant::now();
    let full = run_export(&calib.bucket, &calib.stack, &calib.tpl, true);
    assert_eq!(full.code, 0, "{}", full.stderr);
    let span = t0.elapsed().as_millis() as u64;
    let s3 = h::s3().await;
    let mut phases: BTreeMap<String, u32> = BTreeMap::new();
    let mut resumed = 0;
    for seed in 0..seeds {
        let f = flat("Crash").await;
        let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
        rng ^= rng >> 31;
        // Stratified: seed k is killed in the k-th slice of the run, at a random point.
        let slice = (span / seeds).max(1);
        let at = slice * seed + rng % slice;
        let child = spawn_export(&f.bucket, &f.stack, &f.tpl, true);
        tokio::time::sleep(Duration::from_millis(at)).await;
        kill(child);
        let p = progress(&s3, &f.bucket).await;
        let phase = phase_of(&p);
        *phases.entry(phase.clone()).or_default() += 1;
        let when = format!("seed {seed}, killed at {at} ms ({phase})");
        assert_owned(&f.bucket, &f.stack, &f.m, &when).await;
        let again = run_export(&f.bucket, &f.stack, &f.tpl, true);
        assert_eq!(
            again.code, 0,
            "{when}: stdout:\n{}\nstderr:\n{}",
            again.stdout, again.stderr
        );
        if again.stderr.contains("resuming run") {
            resumed += 1;
        }
        assert_migrated(&f.bucket, &f.stack, &f.m, &when).await;
    }
    eprintln!(
        "crash-export: {seeds} seeds over {span} ms, kill points by stage/last step {phases:?}, {resumed} resumed, 0 resources lost, 0 locks left"
    );
}

/// The run polls as CloudFormation answers (docs/export.md, "Waiting (export-poll)"): without
/// `--fast`, a flat export on the emulator (whose operations complete at once) waits no
/// fixed times. It took 22.4 s with fixed 3 s / 8 s waits; the bound here leaves room for
/// a loaded machine, the time is printed.
#[tokio::test]
async fn poll_as_cloudformation_answers_a_flat_export_without_fast_waits_no_fixed_times() {
    let f = flat("Quick").await;
    let t0 = Instant::now();
    let run = run_export(&f.bucket, &f.stack, &f.tpl, false);
    let took = t0.elapsed();
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    eprintln!("a flat export without --fast took {took:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_migrated(&f.bucket, &f.stack, &f.m, "after the export").await;
}
