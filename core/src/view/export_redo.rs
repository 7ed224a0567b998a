//! The words of an export report's lines to do by hand ([`Redo`], docs/export.md,
//! "Failure (export-abort)"). A name is printed by the printing rule (`shown`), a
//! pre-deleted row's id and type flattened, as the report always printed them;
//! `report.json` stores these words ([`Redo`]'s serde goes through `String`).

use std::fmt;

use crate::export::plain::shown;
use crate::export::redo::{Absent, Redo, TemplateLeft};
use crate::text::flatten_str;

impl From<Redo> for String {
    fn from(r: Redo) -> String {
        r.to_string()
    }
}

impl fmt::Display for Redo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Redo::InFlight { stack, cfn, phase } => write!(
                f,
                "{}: CloudFormation was still running {} on stack {} when the run stopped: wait until {} settles and read its status before doing anything below; in IMPORT_COMPLETE or UPDATE_COMPLETE it holds the imported resources (never delete it then: its resources would be deleted with it)",
                shown(stack),
                phase.label(),
                shown(cfn),
                shown(cfn)
            ),
            Redo::Withdrawn { stack, cfn } => write!(
                f,
                "{}: its phase-1 IMPORT failed, and the run deleted the empty CloudFormation stack {} it had created (it held none of the resources); the cdkd record is unchanged. Fix the cause and run the export again",
                shown(stack),
                shown(cfn)
            ),
            Redo::NothingSubmitted { stack } => write!(
                f,
                "{}: nothing was submitted; the cdkd record is unchanged. Fix the cause and run the export again",
                shown(stack)
            ),
            Redo::NothingSubmittedForIt { stack } => write!(
                f,
                "{}: nothing was submitted for it; its cdkd record is unchanged",
                shown(stack)
            ),
            Redo::ImportUnconfirmed { stack, cfn } => {
                let cfn = shown(cfn);
                write!(
                    f,
                    "{}: the phase-1 IMPORT into CloudFormation stack {cfn} did not complete as far as the run saw; the cdkd record is unchanged. Fix the cause and run the same export command again: it resumes this run from what CloudFormation holds now. Do not delete {cfn} yourself: once its import completed, it owns the resources and deleting it deletes them",
                    shown(stack)
                )
            }
            Redo::Phase1Only {
                stack,
                cfn,
                region,
                imported,
                phase2,
                pre_deleted,
            } => phase1_only(f, [stack, cfn, region], *imported, *phase2, pre_deleted),
            Redo::RecordKept { stack, cfn } => {
                let cdkd = shown(stack);
                write!(
                    f,
                    "{cdkd}: the migration succeeded (CloudFormation stack {} holds it), but its cdkd record was not deleted: forget it with `cdkd-flow state orphan {cdkd}` (never `cdkd destroy`)",
                    shown(cfn)
                )
            }
            Redo::ResumesThisRun { imported } => write!(
                f,
                "Running the same export command again resumes this run (it never starts over while the stacks imported so far exist): {}",
                imported
                    .iter()
                    .map(|(s, c)| format!("{} -> {}", shown(s), shown(c)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Redo::NothingLocked => f.write_str(
                "nothing was locked or changed: fix the cause, then run the export again",
            ),
            Redo::NotResumed { run } => write!(
                f,
                "run {} was not resumed: it stays as it stopped, and its destination stacks as they are (one may hold imported resources)",
                flatten_str(run)
            ),
            Redo::FixThenResume => f.write_str(
                "fix the cause, then run the same export command again: it resumes the run",
            ),
            Redo::MayHoldSubmitted => f.write_str(
                "CloudFormation may hold what the run submitted: leave the destination stacks as they are (they may own imported resources)",
            ),
            Redo::LocksMayStay => f.write_str(
                "the run's locks may stay held by it until it is resumed or they expire (30 minutes after their last renewal)",
            ),
            Redo::FixThenResumeOrAnew => f.write_str(
                "fix the cause, then run the same export command again: it resumes the run, or runs it anew when nothing reached CloudFormation",
            ),
            Redo::StoppedBeforeLocks => f.write_str(
                "the run was stopped before it took its locks; a step still running then may yet take them, and they stay until they expire (30 minutes) or the same command takes them over",
            ),
            Redo::PlansAnew => {
                f.write_str("run the same export command again: it plans the run anew")
            }
            Redo::MayStillBeWorking => f.write_str(
                "CloudFormation may still be working on a change set the run executed; leave the destination stacks as they are (never delete one: it may own imported resources)",
            ),
            Redo::LocksStay => f.write_str(
                "the run's locks stay held by it until it is resumed or they expire (30 minutes after their last renewal)",
            ),
            Redo::RunAgainToResume { same: true } => f.write_str(
                "run the same command again to resume it (it asks first; -y answers yes)",
            ),
            Redo::RunAgainToResume { same: false } => f.write_str(
                "run the command that started it again to resume it (it asks first; -y answers yes)",
            ),
            Redo::PreDeleted {
                stack,
                rows,
                meanwhile,
            } => pre_deleted(f, stack, rows, meanwhile),
            Redo::Adoption {
                stack,
                cfn,
                own_imported,
                children,
            } => adoption(f, stack, cfn, *own_imported, children),
            Redo::Flip { stack, cfn } => write!(
                f,
                "{}: CloudFormation stack {} is still in IMPORT_COMPLETE, which cannot be adopted: before the adoption, move it to UPDATE_COMPLETE with a tag-only update (the flip): update-stack with --use-previous-template, a new tag cdkd:nested-export-flip, every parameter as ParameterKey=<name>,UsePreviousValue=true, and the IAM and auto-expand capabilities",
                shown(stack),
                shown(cfn)
            ),
            Redo::TemplateLeft(left) => left.fmt(f),
            Redo::Recorded(words) => f.write_str(words),
        }
    }
}

/// Printed as the cleanup always printed it: the store's error as it gave it.
impl fmt::Display for TemplateLeft {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the transient template s3://{}/{} was not deleted: {}",
            self.bucket, self.key, self.error
        )
    }
}

/// Phase 1 succeeded and phase 2 did not: the three ways on (the same a destroy or an
/// orphan of the record names when it refuses it).
fn phase1_only(
    f: &mut fmt::Formatter<'_>,
    [stack, cfn, region]: [&String; 3],
    imported: usize,
    phase2: usize,
    pre_deleted: &[String],
) -> fmt::Result {
    let (cdkd, cfn, region) = (shown(stack), shown(cfn), shown(region));
    let deleted = if pre_deleted.is_empty() {
        String::new()
    } else {
        format!(
            " {} IMPORT-unsupported resource(s) were deleted ({}) and phase 2 would have recreated them.",
            pre_deleted.len(),
            pre_deleted.iter().map(|id| shown(id)).collect::<Vec<_>>().join(", ")
        )
    };
    write!(
        f,
        "{cdkd}: phase 1 succeeded: CloudFormation stack {cfn} ({region}) holds the {imported} imported resource(s). Phase 2 did not complete, so the stack lacks its Outputs and the {phase2} resource(s) phase 2 creates.{deleted} The cdkd record is unchanged, but do not run `cdkd deploy` or `cdkd-flow destroy` on it: they would change or delete resources CloudFormation now owns (cdkd-flow destroy refuses it). Fix the cause and run the same export command again: it resumes this run. Or apply the full template to {cfn} with an UPDATE change set by hand, then forget the record with `cdkd-flow state orphan {cdkd} --abandon-export`. Or give the resources back to the record: update {cfn} so that every resource in it has DeletionPolicy Retain, delete {cfn} once that update is complete (its resources stay); the record then manages them again"
    )
}

/// The pre-deleted resources of a stopped stack, absent until its phase 2 completes.
fn pre_deleted(
    f: &mut fmt::Formatter<'_>,
    stack: &str,
    rows: &[(String, Option<String>)],
    meanwhile: &[Absent],
) -> fmt::Result {
    let rows: Vec<String> = rows
        .iter()
        .map(|(id, ty)| match ty {
            Some(ty) => format!("{} ({})", flatten_str(id), flatten_str(ty)),
            None => flatten_str(id),
        })
        .collect();
    let meanwhile: Vec<&str> = meanwhile
        .iter()
        .map(|a| match a {
            Absent::IamPermissions => "the permissions an IAM policy grants are missing",
            Absent::ApiRequests => "an API stage serves no requests",
            Absent::Unknown => {
                "what such a resource provides is missing: an IAM policy's permissions, an API stage's requests"
            }
        })
        .collect();
    let one = rows.len() == 1;
    write!(
        f,
        "{}: the run deleted {} before phase 2, which re-creates {}: {} absent until the run is resumed and its phase 2 completes (meanwhile {})",
        shown(stack),
        rows.join(", "),
        if one { "it" } else { "them" },
        if one { "it is" } else { "they are" },
        meanwhile.join("; ")
    )
}

/// A parent's already-imported children, to adopt by hand.
fn adoption(
    f: &mut fmt::Formatter<'_>,
    stack: &str,
    cfn: &str,
    own_imported: bool,
    children: &[String],
) -> fmt::Result {
    let names = children
        .iter()
        .map(|c| shown(c).to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let first = if own_imported {
        format!(
            "CloudFormation stack {} holds its own resources",
            shown(cfn)
        )
    } else {
        format!(
            "import its own resources into CloudFormation stack {} by hand",
            shown(cfn)
        )
    };
    write!(
        f,
        "{}: {first}; its already-imported nested stacks ({names}) must be adopted by an IMPORT change set on it that names each by its StackId (DeletionPolicy Retain, the child's template and tags: CloudFormation's \"nest an existing stack\"), then its phase 2 applied; then forget the records with `cdkd-flow state orphan` (with --abandon-export for a stack that had not migrated), never `cdkd destroy`",
        shown(stack)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::phase::Phase;
    use crate::view::test_support::{assert_stored_as_words, lines};

    fn every_line() -> Vec<Redo> {
        let s = |v: &str| v.to_string();
        let phase1_only = |pre_deleted: Vec<String>| Redo::Phase1Only {
            stack: s("App"),
            cfn: s("App-cfn"),
            region: s("us-east-1"),
            imported: 3,
            phase2: 2,
            pre_deleted,
        };
        vec![
            Redo::InFlight {
                stack: s("App"),
                cfn: s("App-cfn"),
                phase: Phase::Update,
            },
            Redo::Withdrawn {
                stack: s("App"),
                cfn: s("App-cfn"),
            },
            Redo::NothingSubmitted { stack: s("App") },
            Redo::NothingSubmittedForIt { stack: s("App~Db") },
            Redo::ImportUnconfirmed {
                stack: s("App"),
                cfn: s("bad\nname"),
            },
            phase1_only(vec![]),
            phase1_only(vec![s("AppPolicy"), s("Stage\u{1b}[2J")]),
            Redo::RecordKept {
                stack: s("-App"),
                cfn: s("App-cfn"),
            },
            Redo::ResumesThisRun {
                imported: vec![(s("App"), s("App-cfn")), (s("App~Db"), s("App-Db"))],
            },
            Redo::NothingLocked,
            Redo::NotResumed {
                run: s("export-App-1\nx"),
            },
            Redo::FixThenResume,
            Redo::MayHoldSubmitted,
            Redo::LocksMayStay,
            Redo::FixThenResumeOrAnew,
            Redo::StoppedBeforeLocks,
            Redo::PlansAnew,
            Redo::MayStillBeWorking,
            Redo::LocksStay,
            Redo::RunAgainToResume { same: true },
            Redo::RunAgainToResume { same: false },
            Redo::PreDeleted {
                stack: s("App"),
                rows: vec![(s("AppPolicy"), Some(s("AWS::IAM::Policy")))],
                meanwhile: vec![Absent::IamPermissions],
            },
            Redo::PreDeleted {
                stack: s("App"),
                rows: vec![
                    (s("Stage"), Some(s("AWS::ApiGatewayV2::Stage"))),
                    (s("Other\nrow"), None),
                ],
                meanwhile: vec![Absent::ApiRequests, Absent::Unknown],
            },
            Redo::Adoption {
                stack: s("App"),
                cfn: s("App-cfn"),
                own_imported: true,
                children: vec![s("App-Db"), s("App-Queue")],
            },
            Redo::Adoption {
                stack: s("App"),
                cfn: s("App-cfn"),
                own_imported: false,
                children: vec![s("App-Db")],
            },
            Redo::Flip {
                stack: s("App~Db"),
                cfn: s("App-Db"),
            },
            Redo::Recorded(s("a warning of the run")),
            Redo::Recorded(s("a line read back")),
        ]
    }

    #[test]
    fn the_words_of_every_redo_line() {
        insta::assert_snapshot!(lines(&every_line()));
    }

    /// `report.json` keeps the words: a line is stored as its words and read back as
    /// them (docs/export.md, "Failure (export-abort)").
    #[test]
    fn a_redo_line_is_stored_as_its_words_and_read_back_as_recorded() {
        for line in every_line() {
            assert_stored_as_words(&line, Redo::Recorded);
        }
    }

    /// A transient template the cleanup of a migrated run could not delete: the words
    /// the cleanup always gave it, stored in `report.json` as them.
    #[test]
    fn the_words_of_a_template_left() {
        let line = Redo::TemplateLeft(TemplateLeft {
            bucket: "state-bucket".into(),
            key: "cdkd/_runs/export-App-1/App/phase1.json".into(),
            error: "AccessDenied: no".into(),
        });
        insta::assert_snapshot!(line.to_string());
        assert_stored_as_words(&line, Redo::Recorded);
    }
}
