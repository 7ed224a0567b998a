//! What the execution's steps pass each other (the state's `run`), and the reads they
//! share: the plan, the run's record, a stack's template and submitted parameters, the
//! CloudFormation client of the record's region. Every step after `export-lock` starts
//! with [`Carry::open`], which renews the locks: a lost lock stops the run before any
//! write (docs/export.md, "Workflow").

use cdkd_aws::cfn::Cfn;
use cdkd_aws::changeset::{NewChangeSet, TemplateRef};
use cdkd_aws::{HeldLock, StateStore};
use cdkd_core::continuation::continues;
use cdkd_core::export::execute::{
    next_action, wait_seconds, ExportRun, InFlight, Next, Pending, StackProgress, MAX_IN_FLIGHT,
};
use cdkd_core::export::params::{no_echo_value, parse_parameter_tokens, resolve_root, StackParams};
use cdkd_core::export::phases::{delivery, Delivery, Phase, CAPABILITIES};
use cdkd_core::export::plan::{Plan, StackPlan};
use cdkd_core::export::redo::TemplateLeft;
use cdkd_core::export::template::Template;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::deps::Deps;
use crate::destroy::RunRef;
use crate::error::StepError;
pub use crate::held::Fence;
use crate::runs;

/// The environment variable naming the deployed service role (infra/template.yaml).
pub const ROLE_ENV: &str = "CDKD_FLOW_EXPORT_SERVICE_ROLE_ARN";

/// The state every execution step reads and returns.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Carry {
    pub run: RunRef,
    /// The stack the current work is for (the root's `run.stack`, or a nested child).
    pub stack: String,
    pub started_ms: i64,
    pub plan_key: String,
    pub locks: Vec<HeldLock>,
    /// What the definition's `Route` does next.
    pub next: Next,
    /// What CloudFormation is doing for the run's stacks (siblings side by side).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_flight: Vec<InFlight>,
    /// The next `Wait`'s length.
    #[serde(default)]
    pub wait_seconds: u64,
    /// A local `--fast` run: poll every second.
    #[serde(default)]
    pub fast: bool,
    /// `--parameter K=V` tokens, as given (NoEcho values are read from here, never
    /// from the plan, which stores them masked).
    #[serde(default)]
    pub parameters: Vec<String>,
    /// A CloudFormation service role passed to every change set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role_arn: Option<String>,
    /// Lines of the run's log a step had no other reason to write `progress.json` for
    /// (an execution started): the next step that saves the record writes them first
    /// (docs/export.md, "Requests").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsaved_log: Vec<String>,
    /// Steps this execution has routed the run through (docs/runs.md, "Continuing in a
    /// new execution").
    #[serde(default)]
    pub loops: u32,
    /// The run goes on in a new execution before this one's history fills up (the
    /// definition's `Route` reads it first).
    #[serde(default)]
    pub continue_as_new: bool,
}

/// What a step works with.
pub struct Ctx<'a> {
    pub deps: &'a Deps,
    pub store: StateStore,
    pub cfn: Cfn,
    pub carry: Carry,
    /// The plan and the run's record as this invocation read or saved them: a step reads
    /// each once (`progress.json` has one writer, the running step).
    plan_read: std::sync::Mutex<Option<Plan>>,
    progress_read: std::sync::Mutex<Option<ExportRun>>,
    /// The S3 version of `progress.json` this invocation last read or wrote (a deployed
    /// run's): its next write goes only over it (`runs::write_run_record_over`).
    progress_etag: std::sync::Mutex<Option<String>>,
    /// Whether this invocation saved the record, `carry.unsaved_log` with it.
    log_saved: std::sync::atomic::AtomicBool,
}

/// A copy of what `cell` holds.
fn cached<T: Clone>(cell: &std::sync::Mutex<Option<T>>) -> Option<T> {
    cell.lock().ok().and_then(|c| c.clone())
}

fn keep<T>(cell: &std::sync::Mutex<Option<T>>, value: T) {
    if let Ok(mut c) = cell.lock() {
        *c = Some(value);
    }
}

impl<'a> Ctx<'a> {
    /// The message that tells the run's end as its report `report` (at `key`) says.
    pub fn ended_notice(
        &self,
        report: &cdkd_core::export::report::ExportReport,
        key: &str,
    ) -> cdkd_core::notify::Notice {
        cdkd_core::view::notify::export_ended(
            report,
            &self.carry.run.stack,
            Some(&self.carry.run.region),
            key,
        )
    }

    /// Renews the lock of the stack the step writes to (`carry.stack`: its record or its
    /// CloudFormation stack), and the others when due, then builds the clients of the
    /// record's region. A lost lock stops the step before any write.
    pub async fn open(carry: Carry, deps: &'a Deps) -> Result<Ctx<'a>, StepError> {
        let stack = carry.stack.clone();
        Self::fenced(carry, deps, Fence::Stack(&stack)).await
    }

    /// [`Ctx::open`] renewing the locks `fence` names.
    pub async fn fenced(
        mut carry: Carry,
        deps: &'a Deps,
        fence: Fence<'_>,
    ) -> Result<Ctx<'a>, StepError> {
        let locks = deps.locks(&carry.run.bucket, &carry.run.prefix).await;
        carry.locks = crate::held::renew_fenced(&locks, &carry.locks, fence, deps.now()).await?;
        Ok(Self::without_renewal(carry, deps).await)
    }

    /// The clients only (the abort path, which must work with a lost lock).
    pub async fn without_renewal(carry: Carry, deps: &'a Deps) -> Ctx<'a> {
        Ctx {
            store: deps.store(&carry.run.bucket, &carry.run.prefix).await,
            cfn: Cfn::new(&deps.sdk, Some(&carry.run.region), None),
            deps,
            carry,
            plan_read: std::sync::Mutex::new(None),
            progress_read: std::sync::Mutex::new(None),
            progress_etag: std::sync::Mutex::new(None),
            log_saved: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The service role change sets are submitted with: the run's, else the deployed
    /// function's `CDKD_FLOW_EXPORT_SERVICE_ROLE_ARN`; none when both are empty.
    pub fn role_arn(&self) -> Option<String> {
        self.carry
            .role_arn
            .clone()
            .or_else(|| std::env::var(ROLE_ENV).ok())
            .filter(|r| !r.is_empty())
    }

    pub fn now(&self) -> i64 {
        self.deps.now()
    }

    pub async fn plan(&self) -> Result<Plan, StepError> {
        if let Some(plan) = cached(&self.plan_read) {
            return Ok(plan);
        }
        let plan: Plan =
            runs::read_immutable(&self.deps.artifacts, &self.store, &self.carry.plan_key)
                .await?
                .ok_or_else(|| {
                    StepError::bad_input(format!(
                        "the run's plan {} is missing",
                        self.carry.plan_key
                    ))
                })?;
        keep(&self.plan_read, plan.clone());
        Ok(plan)
    }

    /// The plan of the stack the current work is for.
    pub async fn stack_plan(&self) -> Result<StackPlan, StepError> {
        let plan = self.plan().await?;
        plan.stacks
            .into_iter()
            .find(|s| s.stack == self.carry.stack)
            .ok_or_else(|| {
                StepError::bad_input(format!("the run's plan has no stack {}", self.carry.stack))
            })
    }

    fn progress_key(&self) -> String {
        runs::progress_key(&self.carry.run.prefix, &self.carry.run.run_id)
    }

    /// The run's record, with the log lines an earlier step left unsaved
    /// (`carry.unsaved_log`) until this invocation saves them.
    pub async fn progress(&self) -> Result<ExportRun, StepError> {
        let mut rec = match cached(&self.progress_read) {
            Some(rec) => rec,
            None => {
                let (rec, etag): (ExportRun, _) =
                    runs::read_run_record_tagged(self.deps, &self.store, &self.progress_key())
                        .await?
                        .ok_or_else(|| {
                            StepError::bad_input("the run's progress.json is missing")
                        })?;
                keep(&self.progress_read, rec.clone());
                if let Some(etag) = etag {
                    keep(&self.progress_etag, etag);
                }
                rec
            }
        };
        if !self.log_saved.load(std::sync::atomic::Ordering::SeqCst) {
            rec.log.extend(self.carry.unsaved_log.iter().cloned());
        }
        Ok(rec)
    }

    /// Writes the run's record, over the version this invocation read or last wrote
    /// (a deployed run's; docs/export.md, "Requests: read once, and the benchmark"): `Conflict` when another invocation wrote
    /// it in between.
    pub async fn save(&self, rec: &ExportRun) -> Result<(), StepError> {
        let read_at = cached(&self.progress_etag);
        let written = runs::write_run_record_over(
            self.deps,
            &self.store,
            &self.progress_key(),
            rec,
            read_at.as_deref(),
        )
        .await?;
        if let Some(etag) = written {
            keep(&self.progress_etag, etag);
        }
        keep(&self.progress_read, rec.clone());
        self.log_saved
            .store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    /// Deletes a stack's transient template uploads (docs/export.md, "Phases (export-import, export-execute, export-phase2)"); one that
    /// cannot be deleted stays listed, for a retry or the abort. Returns each upload
    /// left.
    pub async fn delete_uploads(&self, s: &mut StackProgress) -> Vec<TemplateLeft> {
        let mut left = Vec::new();
        for key in std::mem::take(&mut s.uploads) {
            if let Err(e) = self.store.delete_object(&key).await {
                left.push(TemplateLeft {
                    bucket: self.store.bucket.clone(),
                    key: key.clone(),
                    error: e.to_string(),
                });
                s.uploads.push(key);
            }
        }
        left
    }

    /// The template the CLI uploaded for `plan`'s stack.
    pub async fn template(&self, plan: &StackPlan) -> Result<Template, StepError> {
        let bytes = runs::read_immutable_raw(&self.deps.artifacts, &self.store, &plan.template_key)
            .await?
            .ok_or_else(|| {
                StepError::bad_input(format!("the template {} is missing", plan.template_key))
            })?;
        let value: Value = cdkd_core::json::parse_json(&bytes).map_err(|e| {
            StepError::bad_input(format!(
                "the template {} is not JSON: {e}",
                plan.template_key
            ))
        })?;
        Template::from_value(&plan.stack, value).map_err(|e| StepError::refused(e.to_string()))
    }

    /// The values submitted to a stack's change sets: for the root `--parameter`
    /// overrides, else Defaults (docs/export.md, "Root"); for a nested child the values the
    /// plan resolved from its parent (docs/export.md, "Children"), a NoEcho one (stored masked)
    /// resolved again from the parent's row (`params::no_echo_value`).
    pub async fn parameters(
        &self,
        template: &Template,
        plan: &StackPlan,
    ) -> Result<Vec<(String, String)>, StepError> {
        let tokens = parse_parameter_tokens(&self.carry.parameters)
            .map_err(|r| StepError::refused(r.to_string()))?;
        if plan.parent.is_none() {
            let params =
                resolve_root(template, &tokens).map_err(|r| StepError::refused(r.to_string()))?;
            return Ok(params
                .submitted
                .into_iter()
                .filter_map(|p| p.value.map(|v| (p.key, v)))
                .collect());
        }
        let mut out = Vec::new();
        let mut parent_side = None;
        for p in &plan.parameters {
            match &p.value {
                Some(_) if p.no_echo => {
                    if parent_side.is_none() {
                        parent_side = Some(self.parent_row(plan, &tokens).await?);
                    }
                    let Some((row, parent)) = parent_side.as_ref() else {
                        continue;
                    };
                    let v = no_echo_value(&plan.stack, &p.key, row.as_ref(), parent)
                        .map_err(|r| StepError::refused(r.to_string()))?;
                    out.push((p.key.clone(), v));
                }
                Some(v) => out.push((p.key.clone(), v.clone())),
                None => {}
            }
        }
        Ok(out)
    }

    /// A child's row in its parent's template (its `Parameters`) and the parent's
    /// resolved parameters. The parent is the root: deeper trees are refused at the lock.
    async fn parent_row(
        &self,
        plan: &StackPlan,
        tokens: &[(String, String)],
    ) -> Result<(Option<Value>, StackParams), StepError> {
        let full = self.plan().await?;
        let parent = full
            .stacks
            .iter()
            .find(|s| Some(&s.stack) == plan.parent.as_ref())
            .ok_or_else(|| {
                StepError::bad_input(format!("the run's plan has no parent of {}", plan.stack))
            })?;
        let template = self.template(parent).await?;
        let params =
            resolve_root(&template, tokens).map_err(|r| StepError::refused(r.to_string()))?;
        let row = parent
            .nested
            .iter()
            .find(|n| n.child_stack == plan.stack)
            .and_then(|n| template.resource(&n.logical_id))
            .and_then(|r| r.property("Parameters").cloned());
        Ok((row, params))
    }

    /// How `body` reaches CloudFormation: inline, or uploaded to the run's folder
    /// (`changesets/<stack>-<phase>.json`) and named by URL. Returns the upload's key.
    pub async fn deliver(
        &self,
        phase: Phase,
        plan: &StackPlan,
        template: &Map<String, Value>,
    ) -> Result<(TemplateRef, Option<String>), StepError> {
        let body = serde_json::to_string(template)
            .map_err(|e| StepError::bad_input(format!("cannot serialize a template: {e}")))?;
        match delivery(phase, &plan.cfn_stack_name, &body, template) {
            Delivery::Inline => Ok((TemplateRef::Body(body), None)),
            Delivery::TooLarge(why) => Err(StepError::refused(why.to_string())),
            Delivery::Upload => {
                let key = format!(
                    "{}/changesets/{}-{}.json",
                    runs::run_prefix(&self.carry.run.prefix, &self.carry.run.run_id),
                    plan.cfn_stack_name,
                    phase.upload_word()
                );
                self.store.put_raw(&key, body.into_bytes()).await?;
                Ok((TemplateRef::Url(self.object_url(&key).await), Some(key)))
            }
        }
    }

    /// The URL CloudFormation reads the state bucket's object `key` at: the bucket's
    /// own region's address (docs/state-and-lock.md, "Three regions" "Bucket region"), whatever the
    /// record's region.
    pub async fn object_url(&self, key: &str) -> String {
        let bucket = &self.store.bucket;
        let region = self.deps.state_bucket(bucket).await.region;
        cdkd_aws::config::object_url(&self.deps.sdk, bucket, &region, key)
    }

    /// Creates the change set of `phase` named `name` on the current stack's destination:
    /// the export's capabilities, the service role, `resources` to import (phases 1 and
    /// 1B). Returns its ARN and the stack's id; a failure names the phase and the stack.
    pub async fn create_change_set(
        &self,
        plan: &StackPlan,
        phase: Phase,
        name: &str,
        template: TemplateRef,
        parameters: Vec<(String, String)>,
        resources: Vec<(String, String, Map<String, Value>)>,
    ) -> Result<(String, String), StepError> {
        let role = self.role_arn();
        self.cfn
            .create_change_set(&NewChangeSet {
                stack: &plan.cfn_stack_name,
                name,
                change_set_type: phase.change_set_type(),
                template,
                parameters,
                capabilities: &CAPABILITIES,
                resources_to_import: resources,
                role_arn: role.as_deref(),
                // A child's stack tags: its parent row's Tags, which the adopting row
                // keeps and CloudFormation requires to match (docs/export.md, "Nested stacks (export-flip, export-adopt)"); and
                // the tags saying which record and run created it (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first").
                tags: with_run_tags(&plan.stack_tags, &plan.stack, &self.carry.run.run_id),
            })
            .await
            .map_err(|e| {
                StepError::new(
                    crate::error::names::CHANGE_SET_FAILED,
                    format!(
                        "failed to create the {} change set of {}: {}",
                        phase.label(),
                        cdkd_core::export::plain::shown(&plan.cfn_stack_name),
                        e.message
                    ),
                )
            })
    }

    /// Records that the current stack now waits on `pending`, and routes the run on.
    pub async fn waiting(mut self, pending: Pending) -> Result<Carry, StepError> {
        let stack = self.carry.stack.clone();
        self.carry.in_flight.retain(|f| f.stack != stack);
        self.carry.in_flight.push(InFlight {
            stack,
            pending,
            since_ms: self.deps.now(),
            ready: false,
            polls: 0,
        });
        let plan = self.plan().await?;
        let rec = self.progress().await?;
        self.route(&plan, &rec)
    }

    /// The carried state routed to the run's next action
    /// (`cdkd_core::export::execute::next_action`): a ready change set, a stack's next
    /// piece of work, a wait for what is in flight, or the cleanup.
    pub fn route(mut self, plan: &Plan, rec: &ExportRun) -> Result<Carry, StepError> {
        let (next, stack) = next_action(plan, rec, &self.carry.in_flight, MAX_IN_FLIGHT)
            .map_err(|e| StepError::bad_input(e.to_string()))?;
        if self.log_saved.load(std::sync::atomic::Ordering::SeqCst) {
            self.carry.unsaved_log.clear();
        }
        self.carry.next = next;
        // Each step routed is a turn of the execution's loop; the run continues in a new
        // execution only between operations, when it would wait (docs/runs.md,
        // "Continuing in a new execution").
        self.carry.loops = self.carry.loops.saturating_add(1);
        self.carry.continue_as_new = next == Next::Wait
            && continues(self.carry.loops, false, self.deps.budgets.history_limit);
        self.carry.wait_seconds = match next {
            Next::Wait => wait_seconds(&self.carry.in_flight, self.carry.fast),
            _ => 0,
        };
        if let Some(stack) = stack {
            self.carry.stack = stack;
        }
        Ok(self.carry)
    }

    /// Records that `phase` of the current stack finished (the stack in `status`) and
    /// routes to what comes next.
    pub async fn phase_done(
        mut self,
        phase: Phase,
        status: &str,
        line: String,
    ) -> Result<Carry, StepError> {
        let plan = self.plan().await?;
        let mut rec = self.progress().await?;
        cdkd_core::export::execute::phase_done(&mut rec, &self.carry.stack, phase, status);
        rec.log.push(line);
        self.save(&rec).await?;
        let stack = self.carry.stack.clone();
        self.carry.in_flight.retain(|f| f.stack != stack);
        self.route(&plan, &rec)
    }
}

/// `tags` and the run's own tags (`cdkd_core::export::resume::run_tags`), a key the
/// template already sets kept as it is.
fn with_run_tags(tags: &[(String, String)], record: &str, run_id: &str) -> Vec<(String, String)> {
    let mut out = tags.to_vec();
    for (k, v) in cdkd_core::export::resume::run_tags(record, run_id) {
        if !out.iter().any(|(key, _)| *key == k) {
            out.push((k, v));
        }
    }
    out
}
