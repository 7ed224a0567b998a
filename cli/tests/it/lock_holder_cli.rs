//! End-to-end, the binary on the emulator: a lock is deleted only by its holder
//! (docs/state-and-lock.md, "Force-unlock: only the lock that was read", docs/repairs.md, "Whole stacks: state orphan <stacks...> [--stack-region R] [-f] [-y]", docs/state-views.md, "A lock left without a record",
//! docs/state-views.md, "A lock without a record", docs/state-views.md, "force-unlock [stacks...]"). Whole-stack `state orphan` takes the lock before it deletes a record and refuses
//! a live one; `--force` and `force-unlock` act on exactly the lock they read; a lock
//! left without a record shows in `state show` and `state list`.
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-flow --test e2e -- --test-threads=1 lock_holder_cli`.

use std::process::Stdio;
use std::time::Duration;

use cdkd_aws::{LockError, ReleaseOutcome};
use cdkd_tests as h;
use serde_json::{json, Value};

const REGION: &str = "us-east-1";

fn key(stack: &str, file: &str) -> String {
    format!("cdkd/{stack}/{REGION}/{file}")
}

fn cli(bucket: &str, args: &[&str]) -> h::CliRun {
    let mut all = vec!["--state-bucket", bucket];
    all.extend_from_slice(args);
    crate::run_cli_env(&all, &[])
}

fn record(stack: &str) -> String {
    json!({"version": 10, "stackName": stack, "region": REGION,
           "resources": {"T": {"resourceType": "AWS::SNS::Topic", "physicalId": "arn:aws:sns:us-east-1:1:t"}},
           "outputs": {}, "lastModified": 1_796_169_600_000i64})
    .to_string()
}

/// A bucket holding the record of each stack.
async fn bucket_with_records(stacks: &[&str]) -> String {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    for stack in stacks {
        h::put_raw(&s3, &bucket, &key(stack, "state.json"), record(stack)).await;
    }
    bucket
}

async fn exists(bucket: &str, key: &str) -> bool {
    h::get_raw(&h::s3().await, bucket, key).await.is_some()
}

async fn etag(bucket: &str, key: &str) -> Option<String> {
    h::get_raw(&h::s3().await, bucket, key)
        .await
        .map(|(_, e)| e)
}

/// A holder of `stack`'s lock that renews it as fast as it can until it finds it lost:
/// the task ends only then.
async fn renewing_holder(
    bucket: &str,
    stack: &str,
    owner: &str,
    operation: &str,
) -> tokio::task::JoinHandle<()> {
    let mgr = h::locks(&h::s3().await, bucket);
    let mut held = mgr
        .acquire(stack, Some(REGION), owner, Some(operation))
        .await
        .unwrap();
    tokio::spawn(async move {
        while let Ok(next) = mgr.renew(&held).await {
            held = next;
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
}

/// Whether the holder still renews a while after the command ended (it stops once it
/// finds its lock lost); the task is stopped either way.
async fn still_renewing(holder: tokio::task::JoinHandle<()>) -> bool {
    tokio::time::sleep(Duration::from_millis(100)).await;
    let renewing = !holder.is_finished();
    holder.abort();
    renewing
}

// ------------------------------------------------------------- state orphan <stack>

#[tokio::test(flavor = "multi_thread")]
async fn lock_deleted_only_by_holder_orphan_refuses_a_live_lock() {
    let bucket = bucket_with_records(&["App"]).await;
    let s3 = h::s3().await;
    let holder = h::locks(&s3, &bucket)
        .acquire(
            "App",
            Some(REGION),
            "cdkd-flow:export-App-1",
            Some("export"),
        )
        .await
        .unwrap();
    let r = cli(&bucket, &["state", "orphan", "App", "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    let line = r
        .stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_default();
    assert!(
        line.starts_with(
            "error: Could not acquire lock for stack App (us-east-1) — held by cdkd-flow:export-App-1, operation: export, since "
        ),
        "{r:?}"
    );
    assert!(line.contains(", expires in "), "{r:?}");
    // An export's lock: wait for it or resume it, never force-unlock it.
    assert!(
        line.contains("run the same cdkd-flow export command again to resume it")
            && !line.contains("run: cdkd-flow force-unlock"),
        "{r:?}"
    );
    assert!(
        exists(&bucket, &key("App", "state.json")).await,
        "the record is kept"
    );
    assert_eq!(
        etag(&bucket, &key("App", "lock.json")).await.as_deref(),
        Some(holder.etag.as_str()),
        "the holder's lock is untouched"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn lock_deleted_only_by_holder_orphan_takes_the_lock_first_and_releases_it() {
    let bucket = bucket_with_records(&["App"]).await;
    let s3 = h::s3().await;
    h::enable_versioning(&s3, &bucket).await;
    let r = cli(&bucket, &["state", "orphan", "App", "-y"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!exists(&bucket, &key("App", "state.json")).await);
    // A lock was written (and its version purged) and released: only its delete
    // marker is left of it.
    assert_eq!(
        h::version_counts(&s3, &bucket, &key("App", "lock.json")).await,
        (0, 1)
    );
    // An expired lock (no lifetime left, docs/state-and-lock.md, "Lock time is S3's") is taken over like
    // any acquire takes it over.
    let bucket = bucket_with_records(&["Old"]).await;
    let past = h::now_ms() - 60_000;
    h::put_raw(
        &s3,
        &bucket,
        &key("Old", "lock.json"),
        h::cdkd_lock_body("gone@host:1", past, past, Some("deploy")),
    )
    .await;
    let r = cli(&bucket, &["state", "orphan", "Old", "-y"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(h::list_all_keys(&s3, &bucket).await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn lock_deleted_only_by_holder_orphan_force_deletes_only_the_lock_it_read() {
    let bucket = bucket_with_records(&["App"]).await;
    let s3 = h::s3().await;
    let mgr = h::locks(&s3, &bucket);
    // Not even --force takes an export run's lock over (docs/state-and-lock.md, "The contention refusal").
    let export = mgr
        .acquire(
            "App",
            Some(REGION),
            "cdkd-flow:export-App-1",
            Some("export"),
        )
        .await
        .unwrap();
    let r = cli(&bucket, &["state", "orphan", "App", "-f"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("Do not force-unlock it") && !r.stderr.contains("LIVE lock"),
        "{r:?}"
    );
    assert!(exists(&bucket, &key("App", "state.json")).await);
    assert_eq!(
        mgr.release(&export).await.unwrap(),
        ReleaseOutcome::Released
    );
    let holder = mgr
        .acquire(
            "App",
            Some(REGION),
            "cdkd-flow:destroy-App-2",
            Some("destroy"),
        )
        .await
        .unwrap();
    let r = cli(&bucket, &["state", "orphan", "App", "-f"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("LIVE lock"), "{r:?}");
    assert!(r.stderr.contains("cdkd-flow:destroy-App-2"), "{r:?}");
    assert_eq!(h::list_all_keys(&s3, &bucket).await, Vec::<String>::new());
    // The displaced holder learns it lost the lock, and its release deletes nothing.
    assert!(matches!(
        mgr.renew(&holder).await,
        Err(LockError::Lost { .. })
    ));
    let now = h::now_ms();
    h::put_raw(
        &s3,
        &bucket,
        &key("App", "lock.json"),
        h::cdkd_lock_body("carol@laptop:7", now, now + 600_000, Some("deploy")),
    )
    .await;
    assert_ne!(
        mgr.release(&holder).await.unwrap(),
        ReleaseOutcome::Released
    );
    assert!(exists(&bucket, &key("App", "lock.json")).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn lock_deleted_only_by_holder_orphan_force_refuses_when_the_lock_it_read_changed() {
    // A holder renewing as fast as it can: each forced orphan either takes over the lock
    // it read (the holder then finds it lost) or refuses because it changed, and then
    // the record and the holder's newer lock are both kept.
    let (mut took, mut refused) = (0, 0);
    for round in 0..8 {
        let stack = format!("Renewed{round}");
        let bucket = bucket_with_records(&[&stack]).await;
        let holder = renewing_holder(&bucket, &stack, "cdkd-flow:destroy-R", "destroy").await;
        let args = ["--state-bucket", &bucket, "state", "orphan", &stack, "-f"];
        let r = tokio::task::spawn_blocking({
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                crate::run_cli_env(&args, &[])
            }
        })
        .await
        .unwrap();
        let still_renewing = still_renewing(holder).await;
        match r.code {
            0 => {
                took += 1;
                assert!(
                    !still_renewing,
                    "round {round}: the holder kept renewing a lock it lost"
                );
                assert!(!exists(&bucket, &key(&stack, "state.json")).await);
            }
            1 => {
                refused += 1;
                assert!(
                    r.stderr
                        .contains("changed after it was read (it was held by cdkd-flow:destroy-R)"),
                    "round {round}: {r:?}"
                );
                assert!(
                    still_renewing,
                    "round {round}: the holder lost its lock: {r:?}"
                );
                assert!(exists(&bucket, &key(&stack, "state.json")).await);
                assert!(exists(&bucket, &key(&stack, "lock.json")).await);
            }
            _ => panic!("round {round}: {r:?}"),
        }
    }
    eprintln!("forced orphans against a renewing holder: {took} took over, {refused} refused");
}

#[tokio::test(flavor = "multi_thread")]
async fn lock_deleted_only_by_holder_orphan_raced_against_an_acquisition_never_deletes_a_lock_it_did_not_read(
) {
    // The race the old orphan lost 7 times in 30: it read "no lock", deleted the record,
    // then deleted whatever lock was there, a new export's included.
    let s3 = h::s3().await;
    let rounds = 30;
    let (mut orphan_first, mut acquirer_first) = (0, 0);
    for round in 0..rounds {
        let stack = format!("Race{round}");
        let bucket = bucket_with_records(&[&stack]).await;
        let mut child =
            crate::cli_command(&["--state-bucket", &bucket, "state", "orphan", &stack, "-y"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn cdkd-flow");
        // Spread the acquisition over the orphan's run, from its start to its end.
        tokio::time::sleep(Duration::from_millis((round * 37 % 400) as u64)).await;
        let acquired = h::locks(&s3, &bucket)
            .acquire(
                &stack,
                Some(REGION),
                "cdkd-flow:export-Race",
                Some("export"),
            )
            .await;
        let out = tokio::task::spawn_blocking(move || {
            let stderr = child.stderr.take();
            let status = child.wait().expect("wait");
            let mut text = String::new();
            if let Some(mut e) = stderr {
                use std::io::Read;
                let _ = e.read_to_string(&mut text);
            }
            (status.code().unwrap_or(-1), text)
        })
        .await
        .unwrap();
        let (code, stderr) = out;
        let lock_now = etag(&bucket, &key(&stack, "lock.json")).await;
        let record_now = exists(&bucket, &key(&stack, "state.json")).await;
        match acquired {
            Ok(held) => {
                // Whatever the orphan did, the lock the acquirer holds is still there.
                assert_eq!(
                    lock_now.as_deref(),
                    Some(held.etag.as_str()),
                    "round {round}: the acquirer's lock was deleted (orphan exit {code}: {stderr})"
                );
                if code == 0 {
                    orphan_first += 1;
                    assert!(!record_now, "round {round}");
                } else {
                    acquirer_first += 1;
                    assert_eq!(code, 1, "round {round}: {stderr}");
                    assert!(
                        stderr.contains("held by cdkd-flow:export-Race"),
                        "round {round}: {stderr}"
                    );
                    assert!(record_now, "round {round}: refused, yet the record is gone");
                }
            }
            Err(LockError::Held { message }) => {
                orphan_first += 1;
                assert!(
                    message.contains("operation: state-orphan"),
                    "round {round}: {message}"
                );
                assert_eq!(code, 0, "round {round}: {stderr}");
                assert!(!record_now, "round {round}");
                assert_eq!(lock_now, None, "round {round}: the orphan left its lock");
            }
            Err(e) => panic!("round {round}: {e}"),
        }
    }
    eprintln!(
        "orphan raced against an acquisition {rounds} times: orphan first {orphan_first}, acquirer first {acquirer_first}"
    );
}

// ------------------------------------------------------------------- force-unlock

#[tokio::test(flavor = "multi_thread")]
async fn lock_deleted_only_by_holder_force_unlock_if_expired_leaves_a_live_lock() {
    let bucket = bucket_with_records(&["App"]).await;
    let now = h::now_ms();
    let body = h::cdkd_lock_body("bob@host:1", now, now + 600_000, Some("deploy"));
    h::put_raw(
        &h::s3().await,
        &bucket,
        &key("App", "lock.json"),
        body.clone(),
    )
    .await;
    let r = cli(
        &bucket,
        &[
            "force-unlock",
            "App",
            "--stack-region",
            REGION,
            "--if-expired",
        ],
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains(
            "App (us-east-1): the lock is held by bob@host:1, operation: deploy and expires in "
        ),
        "{r:?}"
    );
    assert!(
        r.stderr
            .contains("it has not expired, so it was left in place (--if-expired)"),
        "{r:?}"
    );
    assert_eq!(
        h::get_text(&h::s3().await, &bucket, &key("App", "lock.json")).await,
        Some(body)
    );
    let r = cli(&bucket, &["force-unlock", "App", "--stack-region", REGION]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!exists(&bucket, &key("App", "lock.json")).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn lock_deleted_only_by_holder_force_unlock_deletes_only_the_lock_it_read() {
    // A holder renewing as fast as it can: force-unlock either deletes the lock it read
    // and names (the holder then finds it lost) or says the lock changed, exit 1, and
    // the holder's newer lock stays.
    let (mut deleted, mut changed) = (0, 0);
    for round in 0..8 {
        let stack = format!("Unlock{round}");
        let bucket = bucket_with_records(&[&stack]).await;
        let holder = renewing_holder(&bucket, &stack, "cdkd-flow:destroy-U", "destroy").await;
        let r = tokio::task::spawn_blocking({
            let (bucket, stack) = (bucket.clone(), stack.clone());
            move || cli(&bucket, &["force-unlock", &stack, "--stack-region", REGION])
        })
        .await
        .unwrap();
        let still_renewing = still_renewing(holder).await;
        match r.code {
            0 => {
                deleted += 1;
                assert!(
                    r.stdout
                        .contains("owner: cdkd-flow:destroy-U, operation: destroy"),
                    "round {round}: {r:?}"
                );
                assert!(
                    !still_renewing,
                    "round {round}: the holder kept renewing a deleted lock"
                );
            }
            1 => {
                changed += 1;
                assert!(
                    r.stderr.contains("the lock changed after it was read (it was held by cdkd-flow:destroy-U, operation: destroy); nothing was deleted and the newer lock was left in place"),
                    "round {round}: {r:?}"
                );
                assert!(still_renewing, "round {round}: {r:?}");
                assert!(exists(&bucket, &key(&stack, "lock.json")).await);
            }
            _ => panic!("round {round}: {r:?}"),
        }
    }
    eprintln!("force-unlock against a renewing holder: {deleted} deleted, {changed} changed");
}

// ------------------------------------------------- a lock left without a record

#[tokio::test(flavor = "multi_thread")]
async fn state_show_lock_without_record() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    h::put_raw(&s3, &bucket, &key("App", "state.json"), record("App")).await;
    let now = h::now_ms();
    h::put_raw(
        &s3,
        &bucket,
        &key("Orders", "lock.json"),
        h::cdkd_lock_body(
            "cdkd-flow:export-Orders-1",
            now - 60_000,
            now + 600_000,
            Some("export"),
        ),
    )
    .await;
    // A live lock: who holds it, since when, until when, and no command.
    let r = cli(&bucket, &["state", "show", "Orders"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.starts_with("Stack: Orders\n  Region: us-east-1\n  Record: none (no state.json)\n  Lock: locked by cdkd-flow:export-Orders-1 (operation: export), since "), "{r:?}");
    assert!(
        r.stdout.contains("No state record exists for stack Orders (us-east-1), but its lock.json remains: held by cdkd-flow:export-Orders-1 (operation: export) since "),
        "{r:?}"
    );
    assert!(!r.stdout.contains("force-unlock"), "{r:?}");
    let r = cli(&bucket, &["state", "show", "Orders", "--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["state"], Value::Null);
    assert_eq!(v["lock"]["owner"], "cdkd-flow:export-Orders-1");
    // state list marks it.
    let r = cli(&bucket, &["state", "list"]);
    assert_eq!(
        r.stdout, "App (us-east-1)\nOrders (us-east-1) [lock without record]\n",
        "{r:?}"
    );
    let r = cli(&bucket, &["state", "list", "--long"]);
    assert!(r.stdout.contains("Orders (us-east-1) [lock without record]\n  Region: us-east-1\n  Resources: none (no state record; only its lock remains)\n  Last Modified: unknown\n  Lock: locked\n"), "{r:?}");
    // Expired (no lifetime left, docs/state-and-lock.md, "Lock time is S3's"): the command that clears
    // it, which does.
    h::put_raw(
        &s3,
        &bucket,
        &key("Orders", "lock.json"),
        h::cdkd_lock_body(
            "cdkd-flow:export-Orders-1",
            now - 1_000,
            now - 1_000,
            Some("export"),
        ),
    )
    .await;
    let r = cli(&bucket, &["state", "show", "Orders"]);
    assert_eq!(r.code, 0, "{r:?}");
    let wanted = format!(
        "Clear it with: cdkd-flow force-unlock Orders --stack-region us-east-1 --state-bucket {bucket} --if-expired\n"
    );
    assert!(r.stdout.ends_with(&wanted), "{r:?}");
    let r = cli(
        &bucket,
        &[
            "force-unlock",
            "Orders",
            "--stack-region",
            REGION,
            "--if-expired",
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!exists(&bucket, &key("Orders", "lock.json")).await);
    let r = cli(&bucket, &["state", "show", "Orders"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("No state found for stack 'Orders'"),
        "{r:?}"
    );
    let r = cli(&bucket, &["state", "list"]);
    assert_eq!(r.stdout, "App (us-east-1)\n", "{r:?}");
}
