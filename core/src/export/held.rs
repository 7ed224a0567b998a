//! A record whose resources a stopped export holds in CloudFormation (docs/export.md,
//! "Failure (export-abort)", docs/destroy.md, "Refusals before anything is deleted" step 8): an export whose phase 1 imported the record's
//! resources and that then stopped (its abort released the locks) leaves the cdkd record
//! listing resources a CloudFormation stack now owns. A destroy of that record would
//! delete them under the stack; a whole-stack orphan would forget the record while the
//! migration it stands for is half done. Both are refused, naming the CloudFormation
//! stack, the run and the ways on. `state refresh-observed` is not: it deletes nothing
//! and only rewrites the record's baselines, which a resumed run never reads (its plan is
//! in `plan.json`).
//!
//! What is read (by `cdkd-functions`' `destroy::load::export_hold`, for the destroy plan
//! step and the CLI alike): the CloudFormation stack an export of the record creates by
//! default ([`candidate`]); its tags, which name the record and the run
//! ([`super::resume::RUN_TAG`]); its status; the physical ids it lists; the run's
//! `progress.json`. What it means is decided here.

use crate::run::RunId;
use serde::{Deserialize, Serialize};

use super::execute::StackStage;
use super::names::{default_cfn_name, is_valid_cfn_name};
use super::resume::owning_run;
use crate::state::{ResourcesShape, StateRecord};

/// The CloudFormation stack an export of cdkd stack `record` creates when no
/// `--cfn-stack-name` / `--cfn-child-stack-name` names another (the cdkd name, `~` as
/// `-`): the stack a destroy or an orphan of the record looks at; `None` when that is not
/// a valid stack name (an export of it needed an override).
pub fn candidate(record: &str) -> Option<String> {
    let name = default_cfn_name(record);
    is_valid_cfn_name(&name).then_some(name)
}

/// The export run a CloudFormation stack in `status` with `tags` says holds (or may
/// hold) resources of cdkd stack `record`: the stack's tags name the record and the run,
/// and its status is any but `REVIEW_IN_PROGRESS` (created by a change set never
/// executed: it holds nothing) or `DELETE_COMPLETE`. Only then is the rest read.
pub fn tagged_run(record: &str, status: &str, tags: &[(String, String)]) -> Option<String> {
    if status == "REVIEW_IN_PROGRESS" || status == "DELETE_COMPLETE" {
        return None;
    }
    owning_run(tags, record)
}

/// The physical ids a record lists (entries without one are left out).
pub fn record_physical_ids(record: &StateRecord) -> Vec<&str> {
    match record.resources() {
        ResourcesShape::Map(m) => m
            .values()
            .filter_map(|e| e.get("physicalId").and_then(serde_json::Value::as_str))
            .filter(|p| !p.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// What was read of the candidate stack of one record.
#[derive(Clone, Debug)]
pub struct Found<'a> {
    /// The cdkd stack (`<parent>~<LogicalId>` for a nested child).
    pub record: &'a str,
    pub region: &'a str,
    pub cfn_stack: &'a str,
    pub status: &'a str,
    pub tags: &'a [(String, String)],
    /// The physical ids of the resources the CloudFormation stack lists.
    pub cfn_physical_ids: &'a [String],
    /// This record's stage in the run's `progress.json`, when it could be read (a run
    /// folder expires, or belongs to another state bucket).
    pub stage: Option<StackStage>,
}

/// A record an export holds in CloudFormation. Why it refuses a destroy or a whole-stack
/// orphan (`destroy_reason`, `orphan_reason`) is worded by the refusal views
/// (`core::view::refusal`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportHold {
    pub record: String,
    pub region: String,
    pub cfn_stack: String,
    pub status: String,
    pub run_id: RunId,
    /// The run says every change set of this stack is done: only deleting the record was
    /// left (docs/export.md, "Cleanup (export-cleanup)").
    pub migrated: bool,
}

/// Whether the export `found` names holds resources of `record` in CloudFormation: the
/// stack is tagged as the record's run ([`tagged_run`]) and lists a resource whose
/// physical id the record lists, or the run's progress says this stack's import
/// completed (a record of composite ids CloudFormation names otherwise). A stack the run
/// cleaned up that lists none of the record's resources is another deployment's: the
/// record was written again after the migration.
pub fn hold(found: &Found, record: &StateRecord) -> Option<ExportHold> {
    let run_id = tagged_run(found.record, found.status, found.tags)?;
    let ids = record_physical_ids(record);
    let listed = ids
        .iter()
        .any(|p| found.cfn_physical_ids.iter().any(|c| c == p));
    let imported = found
        .stage
        .is_some_and(|s| (StackStage::Imported..=StackStage::Migrated).contains(&s));
    (listed || imported).then(|| ExportHold {
        record: found.record.to_string(),
        region: found.region.to_string(),
        cfn_stack: found.cfn_stack.to_string(),
        status: found.status.to_string(),
        run_id: run_id.into(),
        migrated: found.stage.is_some_and(|s| s >= StackStage::Migrated),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::resume::run_tags;

    fn record(ids: &[&str]) -> StateRecord {
        let mut res = serde_json::Map::new();
        for (i, p) in ids.iter().enumerate() {
            res.insert(
                format!("R{i}"),
                serde_json::json!({"resourceType": "AWS::SQS::Queue", "physicalId": p}),
            );
        }
        StateRecord::from_body(
            serde_json::json!({"resources": res})
                .as_object()
                .cloned()
                .unwrap(),
        )
    }

    fn found<'a>(
        status: &'a str,
        tags: &'a [(String, String)],
        listed: &'a [String],
        stage: Option<StackStage>,
    ) -> Found<'a> {
        Found {
            record: "App",
            region: "us-east-1",
            cfn_stack: "App",
            status,
            tags,
            cfn_physical_ids: listed,
            stage,
        }
    }

    #[test]
    fn candidate_is_the_default_destination_name_when_valid() {
        assert_eq!(candidate("App").as_deref(), Some("App"));
        assert_eq!(candidate("Root~Child").as_deref(), Some("Root-Child"));
        assert_eq!(candidate("1app"), None);
        assert_eq!(candidate("my_app"), None);
    }

    #[test]
    fn export_held_a_stack_tagged_for_the_record_listing_its_resources_holds_it() {
        let tags = run_tags("App", "r1");
        let listed = vec!["q1".to_string()];
        for status in [
            "IMPORT_COMPLETE",
            "UPDATE_ROLLBACK_COMPLETE",
            "IMPORT_IN_PROGRESS",
            "UPDATE_COMPLETE",
            "DELETE_FAILED",
        ] {
            let h = hold(&found(status, &tags, &listed, None), &record(&["q1", "t1"]))
                .unwrap_or_else(|| panic!("{status} holds"));
            assert_eq!(h.run_id, "r1");
            assert_eq!(h.cfn_stack, "App");
            assert!(!h.migrated);
        }
    }

    #[test]
    fn export_held_nothing_in_review_or_without_the_records_tag() {
        let listed = vec!["q1".to_string()];
        let tags = run_tags("App", "r1");
        assert!(hold(
            &found(
                "REVIEW_IN_PROGRESS",
                &tags,
                &listed,
                Some(StackStage::Importing)
            ),
            &record(&["q1"])
        )
        .is_none());
        // Another record's export, or a stack no export created.
        let other = run_tags("Other", "r1");
        assert!(hold(
            &found("IMPORT_COMPLETE", &other, &listed, None),
            &record(&["q1"])
        )
        .is_none());
        assert!(hold(
            &found("IMPORT_COMPLETE", &[], &listed, None),
            &record(&["q1"])
        )
        .is_none());
    }

    #[test]
    fn export_held_by_progress_when_no_physical_id_matches() {
        let tags = run_tags("App", "r1");
        let none: Vec<String> = vec!["arn:other".into()];
        // Composite ids CloudFormation names otherwise: the run's stage decides.
        let h = hold(
            &found("IMPORT_COMPLETE", &tags, &none, Some(StackStage::Updating)),
            &record(&["a|b"]),
        );
        assert!(h.is_some_and(|h| !h.migrated));
        let h = hold(
            &found("UPDATE_COMPLETE", &tags, &none, Some(StackStage::Migrated)),
            &record(&["a|b"]),
        );
        assert!(h.is_some_and(|h| h.migrated));
        // A record written again after the migration: its resources are not the stack's.
        assert!(hold(
            &found("UPDATE_COMPLETE", &tags, &none, Some(StackStage::Cleaned)),
            &record(&["q2"])
        )
        .is_none());
        assert!(hold(
            &found("UPDATE_COMPLETE", &tags, &none, None),
            &record(&["q2"])
        )
        .is_none());
    }

    fn held(migrated: bool) -> ExportHold {
        ExportHold {
            record: "App".into(),
            region: "us-east-1".into(),
            cfn_stack: "App".into(),
            status: "UPDATE_ROLLBACK_COMPLETE".into(),
            run_id: "export-App-1".into(),
            migrated,
        }
    }

    #[test]
    fn export_held_destroy_reason_names_the_stack_the_run_and_both_ways_on() {
        let why = held(false).destroy_reason(Some(" --state-bucket b"));
        assert_eq!(
            why,
            "CloudFormation stack App (UPDATE_ROLLBACK_COMPLETE) holds its resources: export run export-App-1 imported them and stopped before it finished; destroying the record would delete resources CloudFormation now owns. Either run the same cdkd-flow export command again: it resumes run export-App-1 and finishes the migration (the record is deleted then); or give the resources back to the record: update App so that every resource in it has DeletionPolicy Retain, delete App once that update is complete (its resources stay), then run this destroy again"
        );
        // Never a command that deletes the stack as it is.
        assert!(!why.contains("delete-stack"));
    }

    #[test]
    fn export_held_destroy_of_a_migrated_record_says_to_forget_it() {
        let why = held(true).destroy_reason(Some(" --state-bucket b"));
        assert!(
            why.ends_with("Forget the record instead (CloudFormation keeps the resources): cdkd-flow state orphan App --stack-region us-east-1 --state-bucket b"),
            "{why}"
        );
        let why = held(true).destroy_reason(None);
        assert!(why.ends_with("with cdkd-flow state orphan"), "{why}");
    }

    #[test]
    fn export_held_orphan_reason_names_resume_and_abandon_export() {
        let why = held(false).orphan_reason(Some(" --state-bucket b"));
        assert!(why.contains("resumes run export-App-1"), "{why}");
        assert!(
            why.ends_with("then forget the record: cdkd-flow state orphan App --stack-region us-east-1 --abandon-export --state-bucket b"),
            "{why}"
        );
    }

    #[test]
    fn export_held_values_that_do_not_print_as_themselves_are_not_shown() {
        let mut h = held(false);
        h.run_id = "r\u{1b}[31m".into();
        h.record = "App Two".into();
        let why = h.orphan_reason(Some(" --state-bucket b"));
        assert!(!why.contains('\u{1b}'), "{why}");
        assert!(
            why.ends_with("with cdkd-flow state orphan and --abandon-export"),
            "{why}"
        );
    }
}
