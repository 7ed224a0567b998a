//! `cdkd-flow state refresh-observed`: re-read every resource of a stack from AWS and
//! store the reading, redacted by position, as its drift baseline (docs/repairs.md, "state refresh-observed [stacks...]").
//! The decisions are `cdkd_core::repair`'s, the texts `cdkd_core::view::repair`'s, the
//! reads and the locked, conditional save of one stack `cdkd_deleters::read`'s; this
//! file resolves the targets, checks them in the order of docs/repairs.md, "Order of checks", asks, and prints.

use std::collections::BTreeMap;
use std::process::ExitCode;

use cdkd_aws::ssm::Ssm;
use cdkd_core::keys::StackRef;
use cdkd_core::lock::cli_owner;
use cdkd_core::repair::refresh::{
    check_shape, dry_run_tally, exit_code, has_no_resources, precheck, StackRefresh, Tally, Target,
};
use cdkd_core::state::{resolve_single, LegacyOnly};
use cdkd_core::view::repair::{self as v, StackSummary};
use cdkd_core::view::state::collate::ref_cmp;
use cdkd_core::view::state::list::RefView;
use cdkd_deleters::clients::readers_in_region;
use cdkd_deleters::read::refresh::{refresh_stack, RefreshError, RefreshOptions};
use cdkd_deleters::read::registry::READ_CONCURRENCY;
use cdkd_deleters::Readers;
use futures::stream::{self, StreamExt};
use serde_json::{Map, Value};

use crate::context::Ctx;
use crate::error::CliError;
use crate::records::{load_record, ref_view};

const HELP: &str = "\
Re-reads every resource of each stack's state record from AWS and stores the reading as \
the resource's observedProperties (the drift baseline). Nothing is deployed. The reading \
is redacted by position against the record's own properties: where the record holds a \
{{resolve:...}} reference, the reference is stored, never the value AWS echoes; where \
the two cannot be lined up, the mask *** is. Records whose properties hold plaintext \
secrets (written by old binaries) get no protection from this: run 'cdkd scrub' first.

Resources are read through the SDK reader of their type where one exists (S3 bucket, \
SQS queue, SNS topic, SSM parameter, IAM role, inline and managed policy, DynamoDB \
table, Lambda function, log group, KMS key, security group, EventBridge rule), else \
through Cloud Control; the rest count as unsupported. Resources whose baseline \
'cdkd import' refused are never refreshed. Each stack is refreshed under its lock and \
saved only if nobody else saved it meanwhile.

A resource whose read finds it gone (deleted outside cdkd) is reported as gone, with the \
'cdkd-flow state orphan <stack> --resource <logicalId>' command that forgets it; its \
previous baseline is kept.

Exit status: 0 done (or nothing to do), 1 a refusal or an AWS error, 2 some resources \
were not refreshed (a read failed or found the resource gone; the others were saved), or \
a usage error (including a missing -y without a terminal).";

fn non_empty(s: &str) -> Result<String, String> {
    if s.is_empty() {
        Err("the value must not be empty".to_string())
    } else {
        Ok(s.to_string())
    }
}

#[derive(Debug, clap::Args)]
#[command(long_about = HELP)]
pub struct Args {
    /// The stacks to refresh.
    #[arg(value_name = "STACK")]
    pub stacks: Vec<String>,
    /// Every stack in state (with --stack-region: every stack of that region).
    #[arg(long, conflicts_with = "stacks")]
    pub all: bool,
    /// Which region's record, when a stack has state in several.
    #[arg(long, value_parser = non_empty)]
    pub stack_region: Option<String>,
    /// Say what would be refreshed; read nothing from AWS, write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Print a JSON summary on stdout.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(ctx: &Ctx, a: &Args) -> Result<ExitCode, CliError> {
    if a.stacks.is_empty() && !a.all {
        return Err(CliError::Usage(v::REFRESH_USAGE.into()));
    }
    let refs = ctx.store.list_refs().await?;
    let targets = targets(&refs, a)?;
    if targets.is_empty() {
        eprintln!("{}", v::NO_STACKS_FOUND);
        return Ok(ExitCode::SUCCESS);
    }
    precheck_targets(ctx, &targets).await?;
    if !(a.yes || a.dry_run) {
        let views: Vec<RefView<'_>> = targets.iter().map(ref_view).collect();
        match crate::ask::confirm(&v::refresh_prompt(&views)).await? {
            None => {
                return Err(CliError::usage(cdkd_core::usage::Usage::NoTerminal(
                    cdkd_core::usage::NoTerminalFor::RefreshObserved,
                )))
            }
            Some(false) => {
                eprintln!("Aborted.");
                return Ok(ExitCode::SUCCESS);
            }
            Some(true) => {}
        }
    }
    if let Some(legacy) = targets.iter().find(|t| t.region.is_none()) {
        return Err(CliError::refused(&LegacyOnly {
            stack: legacy.stack.clone(),
        }));
    }
    let mut run = Run::new(a);
    for t in &targets {
        let region = t.region.as_deref().unwrap_or_default();
        run.stack(ctx, &t.stack, region).await?;
    }
    run.finish()
}

/// The refs the run targets, in order: `--all` every ref (of `--stack-region` only,
/// when given) in the listing's order; else each named stack once, resolved as every
/// state command resolves one (docs/state-views.md, "What every state command shares").
fn targets(refs: &[StackRef], a: &Args) -> Result<Vec<StackRef>, CliError> {
    if a.all {
        let mut all: Vec<StackRef> = refs
            .iter()
            .filter(|r| {
                a.stack_region
                    .as_deref()
                    .is_none_or(|want| r.region.as_deref() == Some(want))
            })
            .cloned()
            .collect();
        all.sort_by(|x, y| ref_cmp(&x.stack, x.region.as_deref(), &y.stack, y.region.as_deref()));
        all.dedup();
        return Ok(all);
    }
    let views: Vec<RefView<'_>> = refs.iter().map(ref_view).collect();
    let mut out: Vec<StackRef> = Vec::new();
    for name in &a.stacks {
        let one = resolve_single(name, &views, a.stack_region.as_deref())
            .map_err(|r| CliError::refused(&r))?;
        let r = StackRef {
            stack: one.stack.to_string(),
            region: one.region.map(str::to_string),
        };
        if !out.contains(&r) {
            out.push(r);
        }
    }
    Ok(out)
}

/// docs/repairs.md, "Order of checks" step 2: with two or more region-scoped targets, every such record is read and
/// the first malformed one refuses the whole run, before any prompt, lock or write.
async fn precheck_targets(ctx: &Ctx, targets: &[StackRef]) -> Result<(), CliError> {
    if targets.iter().filter(|t| t.region.is_some()).count() < 2 {
        return Ok(());
    }
    let records: Vec<Result<Option<Map<String, Value>>, CliError>> = stream::iter(targets)
        .map(|t| async move {
            match t.region.as_deref() {
                None => Ok(None),
                Some(region) => Ok(ctx
                    .store
                    .get_state(&t.stack, region)
                    .await?
                    .map(|s| s.record.body)),
            }
        })
        .buffered(READ_CONCURRENCY)
        .collect()
        .await;
    let records = records.into_iter().collect::<Result<Vec<_>, _>>()?;
    let checked: Vec<Target<'_>> = targets
        .iter()
        .zip(records.iter())
        .map(|(t, r)| Target {
            stack: &t.stack,
            region: t.region.as_deref(),
            record: r.as_ref(),
        })
        .collect();
    precheck(&checked).map_err(|e| CliError::refused(&e))
}

/// One run over its targets: the per-region clients, what each stack did, the totals.
struct Run<'a> {
    args: &'a Args,
    owner: String,
    clients: BTreeMap<String, (Readers, Ssm)>,
    stacks: Vec<(String, String, Done)>,
    total: Tally,
}

enum Done {
    Skipped,
    Planned(Tally),
    Refreshed(StackRefresh),
}

impl<'a> Run<'a> {
    fn new(args: &'a Args) -> Self {
        Run {
            args,
            owner: cli_owner(
                std::env::var("USER").ok().as_deref(),
                std::env::var("HOSTNAME").ok().as_deref(),
                std::process::id(),
            ),
            clients: BTreeMap::new(),
            stacks: Vec::new(),
            total: Tally::default(),
        }
    }

    fn clients(&mut self, ctx: &Ctx, region: &str) -> &(Readers, Ssm) {
        self.clients.entry(region.to_owned()).or_insert_with(|| {
            (
                readers_in_region(&ctx.sdk, region),
                Ssm::new(&ctx.sdk, Some(region), None),
            )
        })
    }

    fn line(&self, text: &str) {
        if !self.args.json {
            crate::out::println(text);
        }
    }

    /// docs/repairs.md, "Order of checks" step 5 for one target.
    async fn stack(&mut self, ctx: &Ctx, stack: &str, region: &str) -> Result<(), CliError> {
        let loaded = load_record(ctx, stack, region).await?;
        let body = &loaded.record.body;
        check_shape(body, stack, region).map_err(|e| CliError::refused(&e))?;
        let done = if has_no_resources(body) {
            self.line(&v::refresh_skip_line(stack, region));
            Done::Skipped
        } else if self.args.dry_run {
            let (readers, _) = self.clients(ctx, region);
            let t = dry_run_tally(body, &|ty| readers.has_reader(ty));
            self.line(&v::refresh_plan_line(stack, region, &t));
            self.total.add(&t);
            Done::Planned(t)
        } else {
            let owner = self.owner.clone();
            let (readers, ssm) = self.clients(ctx, region);
            let opts = RefreshOptions {
                owner: &owner,
                concurrency: READ_CONCURRENCY,
                now_ms: cdkd_aws::store::now_ms(),
            };
            let ran =
                refresh_stack(&ctx.store, &ctx.locks, readers, ssm, stack, region, opts).await;
            if let Some(w) = &ran.release_warning {
                eprintln!("warning: {w}");
            }
            let refreshed = ran.outcome.map_err(|e| match e {
                RefreshError::Store(s) => CliError::from(s),
                RefreshError::Lock(m) => CliError::Aws(m),
                other => CliError::Refused(other.to_string()),
            })?;
            let shown = v::refresh_stack(stack, region, &refreshed);
            for w in &shown.warnings {
                eprintln!("{w}");
            }
            if !self.args.json {
                crate::out::print(&shown.stdout);
            }
            self.total.add(&refreshed.tally);
            Done::Refreshed(refreshed)
        };
        self.stacks
            .push((stack.to_owned(), region.to_owned(), done));
        Ok(())
    }

    /// The summary (docs/repairs.md, "Output") and the exit status.
    fn finish(self) -> Result<ExitCode, CliError> {
        let summary = v::refresh_summary(&self.total, self.args.dry_run);
        for w in &summary.warnings {
            eprintln!("{w}");
        }
        if self.args.json {
            let rows: Vec<(&str, &str, StackSummary<'_>)> = self
                .stacks
                .iter()
                .map(|(s, r, d)| {
                    let summary = match d {
                        Done::Skipped => StackSummary::Skipped,
                        Done::Planned(t) => StackSummary::Planned(t),
                        Done::Refreshed(x) => StackSummary::Refreshed(x),
                    };
                    (s.as_str(), r.as_str(), summary)
                })
                .collect();
            crate::out::print(&v::refresh_json(&rows, &self.total, self.args.dry_run));
        } else {
            crate::out::print(&summary.stdout);
        }
        Ok(ExitCode::from(exit_code(&self.total) as u8))
    }
}
