//! The run's words as enums. One macro writes the same contract for each: `as_str` is
//! the word as written, `known` the variant a word names (`None` for any other), and
//! serde writes `as_str` and reads through `From<&str>`, so a word no variant names
//! reads as `Other(word)` and is written back as it was.

use serde_json::Value;

/// An enum of words, each variant naming one, plus `Other(String)` for any word none of
/// them names. Two values are equal when their words are: `Other("failed")` built by
/// hand equals `Failed` (build values with `From` to get the named variant).
macro_rules! words {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $word:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A word no other variant names, kept as it was read (an older or a newer
            /// cdkd-flow's, or a hand edit's) and written back unchanged; the empty word
            /// is what a record built by `Default` holds.
            Other(String),
        }

        impl $name {
            /// Every named variant, in the order declared.
            pub const KNOWN: &'static [$name] = &[$($name::$variant),+];

            /// The word as it is written.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $word, )+
                    $name::Other(word) => word,
                }
            }

            /// The named variant of `word`; `None` for a word no variant names.
            pub fn known(word: &str) -> Option<$name> {
                match word {
                    $( $word => Some($name::$variant), )+
                    _ => None,
                }
            }

            /// Whether this is a word no variant names.
            pub fn is_other(&self) -> bool {
                Self::known(self.as_str()).is_none()
            }
        }

        impl Default for $name {
            fn default() -> Self {
                $name::Other(String::new())
            }
        }

        impl From<&str> for $name {
            fn from(word: &str) -> Self {
                Self::known(word).unwrap_or_else(|| $name::Other(word.to_string()))
            }
        }

        impl From<String> for $name {
            fn from(word: String) -> Self {
                Self::known(&word).unwrap_or($name::Other(word))
            }
        }

        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                self.as_str() == other.as_str()
            }
        }

        impl Eq for $name {}

        impl std::hash::Hash for $name {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                self.as_str().hash(state)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        /// The word as written, unchanged: an `Other` word is untrusted text, which a
        /// view flattens before it prints it.
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Word;
                impl serde::de::Visitor<'_> for Word {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("a word")
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        Ok($name::from(v))
                    }
                    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<$name, E> {
                        Ok($name::from(v))
                    }
                }
                d.deserialize_str(Word)
            }
        }
    };
}

words! {
    /// Which workflow a run is (`run.json`'s and `report.json`'s `kind`, a notice's
    /// `operation`, the first word of a generated run id).
    pub enum RunKind {
        Destroy = "destroy",
        Cleanup = "cleanup",
        Export = "export",
    }
}

impl RunKind {
    /// The named kind of a word (`destroy`, `cleanup`, `export`); `None` for any other.
    pub fn of_name(name: &str) -> Option<RunKind> {
        RunKind::known(name)
    }

    /// The word of the kind (`destroy`, `cleanup`, `export`, or the word read).
    pub fn name(&self) -> &str {
        self.as_str()
    }

    /// The kind of a run from its execution input: an export names a `stack` and its
    /// `templates` (or the run it `resume`s), a destroy a `stack` alone, a cleanup a
    /// `pattern`.
    pub fn of_input(input: &Value) -> Option<RunKind> {
        let has = |k: &str| input.get(k).is_some();
        // An execution a run continued in names its kind (docs/runs.md, "Continuing in
        // a new execution").
        let continues =
            |kind: &str| input.pointer("/continuation/kind").and_then(Value::as_str) == Some(kind);
        if has("stack") && (has("templates") || has("resume") || continues("export")) {
            Some(RunKind::Export)
        } else if has("stack") {
            Some(RunKind::Destroy)
        } else if has("pattern") {
            Some(RunKind::Cleanup)
        } else {
            None
        }
    }
}

words! {
    /// How a run ended, as its `report.json`, its `run.json` and its message say.
    pub enum Outcome {
        /// A local run's process ended by itself without an error (`run.json`).
        Succeeded = "succeeded",
        /// It stopped on an error.
        Failed = "failed",
        /// Stopped by Ctrl-C (a local run), or gracefully with stacks left interrupted
        /// (a destroy).
        Interrupted = "interrupted",
        /// An export that migrated every stack.
        Migrated = "migrated",
        /// An export's plan run or `--dry-run` that planned.
        Planned = "planned",
        /// Ended before its plan: nothing was done.
        Refused = "refused",
        /// An export whose approval was rejected.
        Rejected = "rejected",
        /// A destroy that destroyed every stack.
        Destroyed = "destroyed",
        /// A destroy that ended with something left.
        Partial = "partial",
        /// A destroy's report that names what stopped it on an error (`runs list
        /// --local`; its message says `failed`).
        Aborted = "aborted",
        /// A destroy's report of a graceful stop (`runs list --local`; its message says
        /// `interrupted`).
        Stopped = "stopped",
        /// An export waiting for its approval (a message, not an end).
        WaitingForApproval = "waiting-for-approval",
        /// A cleanup that destroyed every stack it selected.
        Finished = "finished",
        /// A cleanup with destroys that failed.
        Incomplete = "incomplete",
        /// A cleanup's dry run.
        DryRun = "dry-run",
    }
}

impl Outcome {
    /// Whether a run that ended so did what it was asked: an export migrated (or
    /// planned), a destroy destroyed, a local run's process succeeded.
    pub fn is_success(&self) -> bool {
        matches!(
            self,
            Outcome::Migrated | Outcome::Destroyed | Outcome::Succeeded | Outcome::Planned
        )
    }
}

words! {
    /// Where an execution of a state machine stands, as Step Functions names it
    /// (DescribeExecution, ListExecutions, its status-change events, a cleanup's
    /// `results.json`).
    pub enum ExecutionStatus {
        Running = "RUNNING",
        Succeeded = "SUCCEEDED",
        Failed = "FAILED",
        TimedOut = "TIMED_OUT",
        Aborted = "ABORTED",
        PendingRedrive = "PENDING_REDRIVE",
    }
}

impl ExecutionStatus {
    /// Whether the execution has ended: every status but RUNNING and PENDING_REDRIVE
    /// (a status no variant names included: Step Functions adds ended ones).
    pub fn is_final(&self) -> bool {
        !matches!(
            self,
            ExecutionStatus::Running | ExecutionStatus::PendingRedrive
        )
    }
}

words! {
    /// The step a destroy's delete in flight resumes (`Handle::Steps`'s `phase` in
    /// `progress.json`): the deleter that wrote it names it.
    pub enum HandlePhase {
        /// Turning deletion protection off (and waiting until that holds).
        Unprotect = "unprotect",
        /// Emptying a bucket, a batch of objects at a time.
        Emptying = "emptying",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip<T>(known: &[T])
    where
        T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        for v in known {
            let written = serde_json::to_value(v).unwrap();
            assert!(written.is_string(), "{written}");
            assert_eq!(&serde_json::from_value::<T>(written).unwrap(), v);
        }
    }

    #[test]
    fn every_word_is_written_as_it_always_was() {
        let written = |v: Value| v.as_str().unwrap().to_string();
        assert_eq!(written(json!(RunKind::Destroy)), "destroy");
        assert_eq!(written(json!(RunKind::Cleanup)), "cleanup");
        assert_eq!(written(json!(RunKind::Export)), "export");
        for (o, w) in [
            (Outcome::Succeeded, "succeeded"),
            (Outcome::Failed, "failed"),
            (Outcome::Interrupted, "interrupted"),
            (Outcome::Migrated, "migrated"),
            (Outcome::Planned, "planned"),
            (Outcome::Refused, "refused"),
            (Outcome::Rejected, "rejected"),
            (Outcome::Destroyed, "destroyed"),
            (Outcome::Partial, "partial"),
            (Outcome::Aborted, "aborted"),
            (Outcome::Stopped, "stopped"),
            (Outcome::WaitingForApproval, "waiting-for-approval"),
            (Outcome::Finished, "finished"),
            (Outcome::Incomplete, "incomplete"),
            (Outcome::DryRun, "dry-run"),
        ] {
            assert_eq!(written(json!(o)), w);
            assert_eq!(o.to_string(), w);
        }
        for (s, w) in [
            (ExecutionStatus::Running, "RUNNING"),
            (ExecutionStatus::Succeeded, "SUCCEEDED"),
            (ExecutionStatus::Failed, "FAILED"),
            (ExecutionStatus::TimedOut, "TIMED_OUT"),
            (ExecutionStatus::Aborted, "ABORTED"),
            (ExecutionStatus::PendingRedrive, "PENDING_REDRIVE"),
        ] {
            assert_eq!(written(json!(s)), w);
        }
        assert_eq!(written(json!(HandlePhase::Unprotect)), "unprotect");
        assert_eq!(written(json!(HandlePhase::Emptying)), "emptying");
    }

    #[test]
    fn every_word_reads_back_as_the_variant_that_wrote_it() {
        round_trip(RunKind::KNOWN);
        round_trip(Outcome::KNOWN);
        round_trip(ExecutionStatus::KNOWN);
        round_trip(HandlePhase::KNOWN);
        assert_eq!(Outcome::KNOWN.len(), 15);
        assert!(Outcome::KNOWN.iter().all(|o| !o.is_other()));
    }

    #[test]
    fn an_unknown_word_from_another_version_reads_as_other_and_is_written_back_unchanged() {
        let kind: RunKind = serde_json::from_value(json!("repair")).unwrap();
        assert_eq!(kind, RunKind::Other("repair".into()));
        assert!(kind.is_other());
        assert_eq!(json!(kind), json!("repair"));
        let outcome: Outcome = serde_json::from_value(json!("half-done")).unwrap();
        assert_eq!(outcome, Outcome::Other("half-done".into()));
        assert!(!outcome.is_success());
        assert_eq!(json!(outcome), json!("half-done"));
        let status: ExecutionStatus = serde_json::from_value(json!("PAUSED")).unwrap();
        assert_eq!(status, ExecutionStatus::Other("PAUSED".into()));
        assert!(status.is_final(), "a status Step Functions adds is an end");
        let phase: HandlePhase = serde_json::from_value(json!("draining")).unwrap();
        assert_eq!(json!(phase), json!("draining"));
        // Case matters: a word is known only as written.
        assert!(RunKind::from("Export").is_other());
        // Even the empty word and odd characters read, and print as read.
        let odd: Outcome = serde_json::from_value(json!("a\nb\u{1b}[2J")).unwrap();
        assert_eq!(odd.as_str(), "a\nb\u{1b}[2J");
        assert_eq!(
            serde_json::from_value::<Outcome>(json!("")).unwrap(),
            Outcome::default()
        );
    }

    #[test]
    fn an_unknown_word_in_a_record_never_fails_its_reading() {
        #[derive(serde::Deserialize)]
        struct Record {
            kind: RunKind,
            outcome: Option<Outcome>,
            status: ExecutionStatus,
            phase: HandlePhase,
        }
        let r: Record = serde_json::from_value(
            json!({"kind": "k", "outcome": "o", "status": "s", "phase": "p"}),
        )
        .unwrap();
        assert_eq!(
            (
                r.kind.as_str(),
                r.outcome.unwrap().as_str(),
                r.status.as_str(),
                r.phase.as_str()
            ),
            ("k", "o", "s", "p")
        );
    }

    #[test]
    fn the_run_records_write_their_words_as_before() {
        use crate::export::execute::ExportRun;
        use crate::export::report::refused;
        let r = serde_json::to_value(refused("export-App-1", None, "LockHeld: x")).unwrap();
        assert_eq!(
            (&r["kind"], &r["outcome"]),
            (&json!("export"), &json!("refused"))
        );
        let progress = ExportRun {
            kind: RunKind::Export,
            ..ExportRun::default()
        };
        assert_eq!(serde_json::to_value(progress).unwrap()["kind"], "export");
        // A record built empty writes the empty word it always wrote.
        assert_eq!(
            serde_json::to_value(ExportRun::default()).unwrap()["kind"],
            ""
        );
        let back: ExportRun = serde_json::from_value(json!({
            "runId": "r", "kind": "export", "startedMs": 1, "stacks": []
        }))
        .unwrap();
        assert_eq!(back.kind, RunKind::Export);
    }

    #[test]
    fn a_word_equals_its_variant_however_it_was_built() {
        assert_eq!(Outcome::Other("failed".into()), Outcome::Failed);
        assert_eq!(Outcome::from("failed".to_string()), Outcome::Failed);
        assert_eq!(Outcome::Failed, "failed");
        assert!(ExecutionStatus::Failed.is_final());
        assert!(!ExecutionStatus::Running.is_final());
        assert!(!ExecutionStatus::PendingRedrive.is_final());
    }

    #[test]
    fn a_runs_kind_is_told_by_its_execution_input() {
        assert_eq!(
            RunKind::of_input(&json!({"stack": "A", "templates": {}})),
            Some(RunKind::Export)
        );
        assert_eq!(
            RunKind::of_input(&json!({"stack": "A", "continuation": {"kind": "export"}})),
            Some(RunKind::Export)
        );
        assert_eq!(
            RunKind::of_input(&json!({"stack": "A"})),
            Some(RunKind::Destroy)
        );
        assert_eq!(
            RunKind::of_input(&json!({"pattern": "p-*"})),
            Some(RunKind::Cleanup)
        );
        assert_eq!(RunKind::of_input(&json!({})), None);
        assert_eq!(RunKind::of_name("cleanup"), Some(RunKind::Cleanup));
        assert_eq!(RunKind::of_name("other"), None);
    }
}
