//! The region guard and the "not found" decision (docs/destroy.md, "One record in a wave" steps 7-8, "Which identifier Cloud Control gets"): a
//! deleter may report `AlreadyGone` only when its client's region is the record's
//! region and the physical id is that API's identifier for the type. Otherwise the
//! resource fails with "cannot confirm deletion" and stays in state.

use crate::error::{DeleteError, DeleteErrorKind};
use crate::progress::DeleteProgress;
use crate::request::DeleteRequest;

/// Whether a client whose region is `client_region` may vouch for "not found" in the
/// record's region. A client without a region never may.
pub fn region_matches(client_region: Option<&str>, req: &DeleteRequest) -> bool {
    client_region.is_some_and(|r| !r.is_empty() && r == req.region)
}

/// Turns a "not found" answer into `AlreadyGone`, or into a `CannotConfirmDeletion`
/// error when the region guard fails or `id_is_identifier` is false.
pub fn not_found(
    req: &DeleteRequest,
    client_region: Option<&str>,
    id_is_identifier: bool,
    api_answer: &str,
) -> Result<DeleteProgress, DeleteError> {
    if !region_matches(client_region, req) {
        return Err(DeleteError::new(
            req,
            DeleteErrorKind::CannotConfirmDeletion,
            format!(
                "cannot confirm deletion: {api_answer}, but the client's region is {} while the record's region is {}; refusing to treat NotFound as deleted; rerun with the correct region",
                client_region.filter(|r| !r.is_empty()).unwrap_or("(none)"),
                req.region
            ),
        ));
    }
    if !id_is_identifier {
        return Err(DeleteError::new(
            req,
            DeleteErrorKind::CannotConfirmDeletion,
            format!(
                "cannot confirm deletion: {api_answer}, but the physical id is not known to be that API's identifier for {}",
                req.resource_type
            ),
        ));
    }
    Ok(DeleteProgress::AlreadyGone)
}

/// Refuses a delete that must take a final snapshot (`DeletionPolicy: Snapshot`) when the
/// deleter cannot take one (`why` says why): the row fails with
/// `FINAL_SNAPSHOT_UNSUPPORTED` naming type, logical id and stack, and nothing is
/// deleted. Every deleter that has no snapshot parameter calls this before any AWS call.
pub fn refuse_final_snapshot(req: &DeleteRequest, why: &str) -> Result<(), DeleteError> {
    match &req.options.final_snapshot {
        None => Ok(()),
        Some(snapshot) => Err(DeleteError::new(
            req,
            DeleteErrorKind::Unsupported,
            cdkd_core::destroy::decide::final_snapshot_refusal(
                &req.resource_type,
                &req.logical_id,
                &req.run.stack,
                snapshot,
                why,
            ),
        )),
    }
}

/// The region part of an ARN (`arn:partition:service:region:account:resource`).
pub fn arn_region(arn: &str) -> Option<&str> {
    let mut parts = arn.splitn(6, ':');
    if parts.next()? != "arn" {
        return None;
    }
    let _partition = parts.next()?;
    let _service = parts.next()?;
    let region = parts.next()?;
    let _account = parts.next()?;
    parts.next()?;
    Some(region)
}

/// The service part of an ARN.
pub fn arn_service(arn: &str) -> Option<&str> {
    let mut parts = arn.splitn(6, ':');
    if parts.next()? != "arn" {
        return None;
    }
    parts.next()?;
    let service = parts.next()?;
    parts.next()?;
    parts.next()?;
    parts.next()?;
    Some(service)
}

/// The account part of an ARN.
pub fn arn_account(arn: &str) -> Option<&str> {
    arn.split(':').nth(4)
}

/// The partition part of an ARN.
pub fn arn_partition(arn: &str) -> Option<&str> {
    let mut parts = arn.splitn(6, ':');
    (parts.next()? == "arn").then_some(())?;
    parts.next()
}

/// True when `arn` is a well-formed ARN of `service` whose region is `region`.
pub fn arn_in(arn: &str, service: &str, region: &str) -> bool {
    arn_service(arn) == Some(service) && arn_region(arn) == Some(region)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::RunContext;

    fn req(region: &str) -> DeleteRequest {
        DeleteRequest {
            logical_id: "T".into(),
            resource_type: "AWS::SNS::Topic".into(),
            physical_id: "arn:aws:sns:us-east-1:1:t".into(),
            properties: serde_json::Value::Null,
            attributes: serde_json::Value::Null,
            provisioned_by: None,
            region: region.into(),
            attempt: 0,
            run: RunContext {
                run_id: "r".into(),
                stack: "S".into(),
                state_bucket: "b".into(),
                state_prefix: "cdkd".into(),
            },
            options: Default::default(),
        }
    }

    #[test]
    fn final_snapshot_is_refused_by_name_before_any_call_rule_2_8_3() {
        let mut r = req("us-east-1");
        assert_eq!(refuse_final_snapshot(&r, "no"), Ok(()));
        r.options.final_snapshot = Some(cdkd_core::destroy::decide::FinalSnapshot::Identifier(
            "t-final-20261129-123456".into(),
        ));
        let e = refuse_final_snapshot(&r, "this deleter has no snapshot parameter").unwrap_err();
        assert_eq!(e.kind, DeleteErrorKind::Unsupported);
        assert!(!e.retryable);
        assert!(
            e.message
                .starts_with("FINAL_SNAPSHOT_UNSUPPORTED: AWS::SNS::Topic T in stack S"),
            "{e}"
        );
    }

    #[test]
    fn region_guard_not_found_in_same_region_is_already_gone() {
        assert_eq!(
            not_found(&req("us-east-1"), Some("us-east-1"), true, "x"),
            Ok(DeleteProgress::AlreadyGone)
        );
    }

    #[test]
    fn region_guard_not_found_in_other_region_cannot_confirm_deletion() {
        let e = not_found(
            &req("us-east-1"),
            Some("eu-west-1"),
            true,
            "topic not found",
        )
        .unwrap_err();
        assert_eq!(e.kind, DeleteErrorKind::CannotConfirmDeletion);
        assert!(e.to_string().contains("cannot confirm deletion"), "{e}");
        assert!(
            e.to_string()
                .contains("AWS::SNS::Topic arn:aws:sns:us-east-1:1:t"),
            "{e}"
        );
        assert!(e.to_string().contains("eu-west-1"), "{e}");
    }

    #[test]
    fn region_guard_client_without_region_cannot_confirm_deletion() {
        let e = not_found(&req("us-east-1"), None, true, "x").unwrap_err();
        assert_eq!(e.kind, DeleteErrorKind::CannotConfirmDeletion);
    }

    #[test]
    fn not_found_for_an_id_that_is_not_the_api_identifier_cannot_confirm_deletion() {
        let e = not_found(&req("us-east-1"), Some("us-east-1"), false, "x").unwrap_err();
        assert_eq!(e.kind, DeleteErrorKind::CannotConfirmDeletion);
        assert!(e.message.contains("not known to be that API's identifier"));
    }

    #[test]
    fn arn_parts_are_read_by_position() {
        let a = "arn:aws:lambda:eu-west-1:123:function:f";
        assert_eq!(arn_region(a), Some("eu-west-1"));
        assert_eq!(arn_service(a), Some("lambda"));
        assert_eq!(arn_account(a), Some("123"));
        assert_eq!(arn_partition(a), Some("aws"));
        assert!(arn_in(a, "lambda", "eu-west-1"));
        assert_eq!(arn_region("not-an-arn"), None);
    }
}
