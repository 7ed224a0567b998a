//! `runs show` and `runs watch` of a deployed run when no deployed backend answers: the
//! run's folder alone (docs/cli.md, "runs"), its execution unasked (status `UNKNOWN`),
//! never a refusal while the state bucket can be read.

use cdkd_core::runs_note::RunsNote;
use std::process::ExitCode;

use cdkd_core::run::RunKind;
use cdkd_core::runs_refusal::RunsRefusal;
use cdkd_core::view;
use cdkd_functions::runs;
use serde_json::Value;

use crate::context;
use crate::error::CliError;
use crate::global::GlobalOpts;
use crate::run::artifacts;

/// What `runs show <run>` (`watch` false) or `runs watch <run>` (`watch` true) prints of
/// the run's folder; `why`: why no backend could be asked. A watch cannot follow an
/// execution it cannot ask: it prints what the folder holds and exits 0 when the run's
/// report says it succeeded, 1 otherwise.
pub async fn from_folder(
    g: &GlobalOpts,
    given: &str,
    json: bool,
    watch: bool,
    why: CliError,
) -> Result<ExitCode, CliError> {
    let run = &crate::run::ids::check_execution_name(given)?;
    let ctx = context::build(g).await.map_err(|e| {
        CliError::refused(&RunsRefusal::NoBackendNorBucket {
            backend: why.to_string(),
            error: e.to_string(),
        })
    })?;
    let store = &ctx.store;
    let Some((row, outcome)) = crate::run::folders::deployed_row(store, run).await? else {
        return Err(CliError::refused(&RunsRefusal::NoRunInFolder {
            run: run.clone(),
            bucket: store.bucket.clone(),
            prefix: ctx.prefix.clone(),
            backend: why.to_string(),
        }));
    };
    let backend = &why.to_string();
    eprintln!("{}", RunsNote::ShowingFolder { backend, run });
    if json {
        let report: Option<Value> =
            artifacts::read_json(store, &runs::report_key(&ctx.prefix, run), "report").await?;
        let v = view::runs::show_json(&row, &Value::Null, None, report.as_ref());
        crate::out::println(&serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        crate::out::print(&view::runs::render_show_head(&row));
        match row.kind {
            Some(RunKind::Destroy) => {
                match crate::run::watch::read_report(store, &ctx.prefix, run).await {
                    Some(r) => crate::out::print(&view::report::render_destroy_report(
                        &r.stacks,
                        r.complete,
                        r.aborted.as_deref(),
                    )),
                    None => crate::out::print(view::runs::NO_REPORT_YET),
                }
            }
            Some(RunKind::Export) => {
                let reported = artifacts::print_execution_report(store, run, run, false)
                    .await?
                    .is_some();
                let planned = reported
                    || artifacts::print_plan(store, run, false, true)
                        .await?
                        .is_some();
                if !planned {
                    crate::out::print(view::runs::NO_PLAN_YET);
                }
            }
            _ => {}
        }
    }
    if !watch {
        return Ok(ExitCode::SUCCESS);
    }
    match outcome {
        Some(o) if o.is_success() => Ok(ExitCode::SUCCESS),
        Some(_) => Ok(ExitCode::from(1)),
        None => {
            eprintln!("{}", RunsNote::NoReportYet { run });
            Ok(ExitCode::from(1))
        }
    }
}
