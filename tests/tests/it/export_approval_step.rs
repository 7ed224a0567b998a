//! The `export-approval` step on the emulator (docs/export.md, "Approval (export-approval)"): it writes the run's
//! `approval.json` with its task token and the plan's counts; the same token again
//! leaves the file (and any decision) as it is; a new token (a retried attempt)
//! replaces an undecided request and one decided for the ended attempt.

use cdkd_core::export::approval::{approval_key, decide, Answer, Approval};
use cdkd_functions::export::approval::{run, ApprovalInput};
use cdkd_functions::Deps;
use cdkd_tests as h;
use serde_json::json;

async fn deps() -> Deps {
    Deps::from_sdk(h::sdk().await, None).await
}

fn input(bucket: &str, run_id: &str, token: &str) -> ApprovalInput {
    serde_json::from_value(json!({
        "token": token,
        "runId": run_id,
        "input": {"stack": "App", "stateBucket": bucket, "statePrefix": "cdkd",
                  "templates": {"App": "k"}, "requireApproval": true,
                  "result": {"plan": {}}},
        "plan": {"planKey": format!("cdkd/_runs/{run_id}/plan.json"), "region": "us-east-1",
                 "stacks": 2, "importRows": 5, "blocked": 0, "warnings": 1, "awsCalls": {}}
    }))
    .unwrap()
}

async fn stored(bucket: &str, run_id: &str) -> Approval {
    let text = h::get_text(&h::s3().await, bucket, &approval_key("cdkd", run_id))
        .await
        .expect("approval.json");
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn export_approval_step_writes_the_request_and_a_new_token_replaces_it() {
    let d = deps().await;
    let bucket = h::fresh_bucket(&h::s3().await).await;
    let run_id = "export-App-approval";

    let out = run(input(&bucket, run_id, "tok-1"), &d).await.unwrap();
    assert!(out.written);
    assert_eq!(out.approval_key, approval_key("cdkd", run_id));
    let first = stored(&bucket, run_id).await;
    assert_eq!(first.stack, "App");
    assert_eq!(first.run_id, run_id);
    assert_eq!(first.token, "tok-1");
    assert_eq!(first.plan_key, format!("cdkd/_runs/{run_id}/plan.json"));
    assert_eq!(
        (
            first.summary.stacks,
            first.summary.import_rows,
            first.summary.warnings
        ),
        (2, 5, 1)
    );
    assert_eq!(first.decision, None);

    // The same attempt invoked again: kept as it is.
    let again = run(input(&bucket, run_id, "tok-1"), &d).await.unwrap();
    assert!(!again.written);
    assert_eq!(stored(&bucket, run_id).await, first);

    // A retried attempt's new token replaces the undecided request.
    assert!(
        run(input(&bucket, run_id, "tok-2"), &d)
            .await
            .unwrap()
            .written
    );
    assert_eq!(stored(&bucket, run_id).await.token, "tok-2");

    // Decided for tok-2: the same token keeps the decision; a new one replaces it.
    let decided = decide(
        &stored(&bucket, run_id).await,
        Answer {
            approved: true,
            by: "alice@laptop".into(),
            at_ms: h::now_ms(),
            reason: None,
        },
    )
    .unwrap();
    h::put_raw(
        &h::s3().await,
        &bucket,
        &approval_key("cdkd", run_id),
        serde_json::to_vec(&decided).unwrap(),
    )
    .await;
    assert!(
        !run(input(&bucket, run_id, "tok-2"), &d)
            .await
            .unwrap()
            .written
    );
    assert_eq!(stored(&bucket, run_id).await, decided);
    assert!(
        run(input(&bucket, run_id, "tok-3"), &d)
            .await
            .unwrap()
            .written
    );
    let replaced = stored(&bucket, run_id).await;
    assert_eq!(replaced.token, "tok-3");
    assert_eq!(replaced.decision, None);
}

#[tokio::test]
async fn export_approval_step_refuses_an_input_without_a_token() {
    let d = deps().await;
    let bucket = h::fresh_bucket(&h::s3().await).await;
    let err = run(input(&bucket, "r", ""), &d).await.unwrap_err();
    assert_eq!(err.name, "BadInput");
    assert!(err.message.contains("task token"), "{err}");
    let keys = h::list_all_keys(&h::s3().await, &bucket).await;
    assert!(keys.is_empty(), "{keys:?}");
}
