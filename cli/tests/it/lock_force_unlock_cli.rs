//! `cdkd-flow force-unlock` end to end against the emulator
//! (docs/state-and-lock.md, "Force-unlock: only the lock that was read", docs/state-views.md, "force-unlock [stacks...]").

use cdkd_tests::*;

fn force_unlock(bucket: &str, extra: &[&str], env: &[(&str, &str)]) -> CliRun {
    let mut args = vec!["--state-bucket", bucket, "force-unlock"];
    args.extend_from_slice(extra);
    crate::run_cli_env(&args, env)
}

#[tokio::test]
async fn lock_force_unlock_cli_stack_region_deletes_that_lock_and_names_holder() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let now = now_ms();
    put_raw(&s3, &bucket, "cdkd/App/us-east-1/state.json", "{}").await;
    put_raw(
        &s3,
        &bucket,
        "cdkd/App/us-east-1/lock.json",
        cdkd_lock_body("bob@host:1", now, now + 600_000, Some("deploy")),
    )
    .await;
    put_raw(
        &s3,
        &bucket,
        "cdkd/App/eu-west-1/lock.json",
        cdkd_lock_body("eve@host:2", now, now + 600_000, None),
    )
    .await;
    let run = force_unlock(&bucket, &["App", "--stack-region", "us-east-1"], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "Released lock for stack App (us-east-1), owner: bob@host:1, operation: deploy\n"
    );
    assert!(get_raw(&s3, &bucket, "cdkd/App/us-east-1/lock.json")
        .await
        .is_none());
    assert!(
        get_raw(&s3, &bucket, "cdkd/App/eu-west-1/lock.json")
            .await
            .is_some(),
        "no other key touched"
    );
}

#[tokio::test]
async fn lock_force_unlock_cli_legacy_only_record_targets_legacy_lock_key() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let now = now_ms();
    put_raw(
        &s3,
        &bucket,
        "cdkd/Leg/state.json",
        r#"{"version":1,"resources":{}}"#,
    )
    .await;
    put_raw(
        &s3,
        &bucket,
        "cdkd/Leg/lock.json",
        cdkd_lock_body("old@box:3", now, now + 600_000, None),
    )
    .await;
    let run = force_unlock(&bucket, &["Leg"], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "Released lock for stack Leg (legacy lock key), owner: old@box:3\n"
    );
    assert!(get_raw(&s3, &bucket, "cdkd/Leg/lock.json").await.is_none());
}

#[tokio::test]
async fn lock_force_unlock_cli_statement_64_unlocks_every_region_and_the_legacy_key() {
    // docs/state-views.md, "force-unlock [stacks...]" step 2, statement 64: without --stack-region every record's lock goes.
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let now = now_ms();
    for r in ["us-east-1", "eu-west-1"] {
        put_raw(&s3, &bucket, &format!("cdkd/App/{r}/state.json"), "{}").await;
        put_raw(
            &s3,
            &bucket,
            &format!("cdkd/App/{r}/lock.json"),
            cdkd_lock_body("bob@host:1", now, now + 600_000, None),
        )
        .await;
    }
    put_raw(&s3, &bucket, "cdkd/App/state.json", "{\"version\":1}").await;
    put_raw(
        &s3,
        &bucket,
        "cdkd/App/lock.json",
        cdkd_lock_body("old@box:2", now, now + 600_000, None),
    )
    .await;
    let run = force_unlock(&bucket, &["App"], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "Released lock for stack App (eu-west-1), owner: bob@host:1\n\
         Released lock for stack App (us-east-1), owner: bob@host:1\n\
         Released lock for stack App (legacy lock key), owner: old@box:2\n"
    );
    for key in [
        "cdkd/App/us-east-1/lock.json",
        "cdkd/App/eu-west-1/lock.json",
        "cdkd/App/lock.json",
    ] {
        assert!(get_raw(&s3, &bucket, key).await.is_none(), "{key}");
    }
}

#[tokio::test]
async fn lock_force_unlock_cli_statement_64_stack_region_touches_only_that_key() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let now = now_ms();
    put_raw(&s3, &bucket, "cdkd/App/us-east-1/state.json", "{}").await;
    put_raw(&s3, &bucket, "cdkd/App/state.json", "{\"version\":1}").await;
    for key in ["cdkd/App/us-east-1/lock.json", "cdkd/App/lock.json"] {
        put_raw(
            &s3,
            &bucket,
            key,
            cdkd_lock_body("bob@host:1", now, now + 600_000, None),
        )
        .await;
    }
    let run = force_unlock(&bucket, &["App", "--stack-region", "us-east-1"], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(get_raw(&s3, &bucket, "cdkd/App/us-east-1/lock.json")
        .await
        .is_none());
    assert!(get_raw(&s3, &bucket, "cdkd/App/lock.json").await.is_some());
}

#[tokio::test]
async fn lock_force_unlock_cli_several_stacks_positional_and_flag() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let now = now_ms();
    for stack in ["A", "B"] {
        put_raw(
            &s3,
            &bucket,
            &format!("cdkd/{stack}/us-east-1/state.json"),
            "{}",
        )
        .await;
        put_raw(
            &s3,
            &bucket,
            &format!("cdkd/{stack}/us-east-1/lock.json"),
            cdkd_lock_body("bob@host:1", now, now + 600_000, None),
        )
        .await;
    }
    let run = force_unlock(&bucket, &["A", "--stack", "B"], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    for stack in ["A", "B"] {
        assert!(
            get_raw(&s3, &bucket, &format!("cdkd/{stack}/us-east-1/lock.json"))
                .await
                .is_none()
        );
    }
}

#[tokio::test]
async fn lock_force_unlock_cli_stack_without_record_uses_cli_region_lower_cased() {
    // docs/state-views.md, "force-unlock [stacks...]" step 2 and docs/state-and-lock.md, "Three regions": no record -> the CLI region
    // (AWS_REGION, lower case).
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let now = now_ms();
    put_raw(
        &s3,
        &bucket,
        "cdkd/Ghost/eu-west-2/lock.json",
        cdkd_lock_body("x@y:1", now, now + 600_000, None),
    )
    .await;
    let run = force_unlock(&bucket, &["Ghost"], &[("AWS_REGION", "EU-WEST-2")]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "Released lock for stack Ghost (eu-west-2), owner: x@y:1\n"
    );
    assert!(get_raw(&s3, &bucket, "cdkd/Ghost/eu-west-2/lock.json")
        .await
        .is_none());
}

#[tokio::test]
async fn lock_force_unlock_cli_missing_lock_is_success_and_says_so() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let run = force_unlock(&bucket, &["App", "--stack-region", "us-east-1"], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "No lock found for stack App (us-east-1); nothing to release.\n"
    );
}

#[tokio::test]
async fn lock_force_unlock_cli_unreadable_lock_is_deleted_regardless() {
    // docs/state-and-lock.md, "Force-unlock: only the lock that was read": an unparsable lock would otherwise block every acquire forever.
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    put_raw(&s3, &bucket, "cdkd/App/us-east-1/lock.json", "{not json").await;
    let run = force_unlock(&bucket, &["App", "--stack-region", "us-east-1"], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "Deleted an unreadable lock object for stack App (us-east-1).\n"
    );
    assert!(get_raw(&s3, &bucket, "cdkd/App/us-east-1/lock.json")
        .await
        .is_none());
}

#[tokio::test]
async fn lock_force_unlock_cli_holder_text_is_sanitized() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let now = now_ms();
    put_raw(
        &s3,
        &bucket,
        "cdkd/App/us-east-1/lock.json",
        cdkd_lock_body("a\u{1b}[2Jb", now, now + 600_000, Some("de\nploy")),
    )
    .await;
    let run = force_unlock(&bucket, &["App", "--stack-region", "us-east-1"], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stdout.contains('\u{1b}'));
    assert_eq!(
        run.stdout,
        "Released lock for stack App (us-east-1), owner: a [2Jb, operation: de ploy\n"
    );
}

#[tokio::test]
async fn lock_force_unlock_cli_missing_bucket_is_one_line_exit_1() {
    let run = force_unlock(
        &unique_bucket_name("missing"),
        &["App", "--stack-region", "us-east-1"],
        &[],
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stderr
            .lines()
            .filter(|l| l.starts_with("error: "))
            .count(),
        1,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("NoSuchBucket"), "{}", run.stderr);
}

/// docs/state-and-lock.md, "The contention refusal": a lock a cdkd-flow export run holds is left in place
/// (exit 1) with the export advice (wait, or resume with the same command; never a
/// force-unlock command), because its CloudFormation stack may own resources the record
/// lists; `--abandon-export` deletes it. Without a record beside it the lock is deleted
/// as any other: nothing is left for a deploy or destroy to delete.
#[tokio::test]
async fn lock_force_unlock_cli_an_export_runs_lock_is_kept_unless_abandoned_or_without_record() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let now = now_ms();
    let owner = "cdkd-flow:export-App-1@box:4242";
    let lock = cdkd_lock_body(owner, now, now - 1_000, Some("export"));
    put_raw(&s3, &bucket, "cdkd/App/us-east-1/state.json", "{}").await;
    put_raw(&s3, &bucket, "cdkd/App/us-east-1/lock.json", lock.clone()).await;

    for extra in [&[][..], &["--if-expired"][..]] {
        let mut args = vec!["App", "--stack-region", "us-east-1"];
        args.extend_from_slice(extra);
        let run = force_unlock(&bucket, &args, &[]);
        assert_eq!(run.code, 1, "{extra:?}: {run:?}");
        assert!(
            run.stderr.contains("left in place")
                && run
                    .stderr
                    .contains("cdkd-flow runs watch export-App-1 --local")
                && run
                    .stderr
                    .contains("run the same cdkd-flow export command again")
                && run.stderr.contains("Do not force-unlock it"),
            "{extra:?}: {}",
            run.stderr
        );
        assert!(
            get_raw(&s3, &bucket, "cdkd/App/us-east-1/lock.json")
                .await
                .is_some(),
            "{extra:?}: the export's lock stays"
        );
    }

    let run = force_unlock(
        &bucket,
        &["App", "--stack-region", "us-east-1", "--abandon-export"],
        &[],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(get_raw(&s3, &bucket, "cdkd/App/us-east-1/lock.json")
        .await
        .is_none());

    // A migrated stack's lock left behind (its record deleted, the release lost).
    put_raw(&s3, &bucket, "cdkd/Gone/us-east-1/lock.json", lock).await;
    let run = force_unlock(&bucket, &["Gone", "--stack-region", "us-east-1"], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(get_raw(&s3, &bucket, "cdkd/Gone/us-east-1/lock.json")
        .await
        .is_none());
}

/// `--run R` deletes only the locks run R holds (deployed or local owner); a later
/// holder's lock, and an unreadable one, are left in place (exit 1): what cdkd-flow
/// prints for a stopped destroy's own lock stays safe when run late.
#[tokio::test]
async fn lock_force_unlock_cli_run_deletes_only_that_runs_locks() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let now = now_ms();
    let put = |stack: &'static str, owner: &'static str| {
        let s3 = s3.clone();
        let bucket = bucket.clone();
        async move {
            put_raw(
                &s3,
                &bucket,
                &format!("cdkd/{stack}/us-east-1/lock.json"),
                cdkd_lock_body(owner, now, now + 600_000, Some("destroy")),
            )
            .await;
        }
    };
    put("Shop", "cdkd-flow:destroy-Shop-1").await;
    put("Shop~Db", "cdkd-flow:destroy-Shop-1@host:42").await;
    put("Other", "bob@host:1").await;
    put("Later", "cdkd-flow:destroy-Shop-10").await;
    put_raw(&s3, &bucket, "cdkd/Odd/us-east-1/lock.json", "not a lock").await;
    let run = force_unlock(
        &bucket,
        &[
            "Shop",
            "Shop~Db",
            "Other",
            "Later",
            "Odd",
            "--stack-region",
            "us-east-1",
            "--run",
            "destroy-Shop-1",
        ],
        &[],
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("Released lock for stack Shop (us-east-1), owner: cdkd-flow:destroy-Shop-1"),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("Released lock for stack Shop~Db (us-east-1)"),
        "{run:?}"
    );
    for kept in ["Other", "Later", "Odd"] {
        assert!(
            get_raw(&s3, &bucket, &format!("cdkd/{kept}/us-east-1/lock.json"))
                .await
                .is_some(),
            "{kept}'s lock is left in place"
        );
        assert!(
            run.stderr
                .contains(&format!("{kept} (us-east-1): the lock is ")),
            "{kept}: {}",
            run.stderr
        );
    }
    assert!(
        run.stderr.contains(
            "held by bob@host:1, operation: destroy, not by the run --run names; it was left in place (--run)"
        ),
        "{}",
        run.stderr
    );
    for gone in ["Shop", "Shop~Db"] {
        assert!(
            get_raw(&s3, &bucket, &format!("cdkd/{gone}/us-east-1/lock.json"))
                .await
                .is_none()
        );
    }
}
