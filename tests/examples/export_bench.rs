//! `make bench-export`: what an export costs as a user runs it, measured on the emulator
//! (not a timed test; docs/testing.md, "The export benchmark (make bench-export)"). For a flat stack of 5 resources shaped like
//! the OracleStack fixture, a flat stack of 50 and a root with 8 nested children, each
//! seeded with real emulator resources (`cdkd_tests::export_bench`), it runs `cdkd-flow
//! export <stack> ... --local -y` (the binary beside this example, without `--fast`) and
//! reports the wall time, the requests the emulator received by service and action
//! (every client of the run: the emulator counts them), and CloudFormation's own time on
//! the run's operations (from the stack events: the physical limit here). Then, from the
//! simulated-latency model (`cdkd_core::export::sim`), the makespan of the same shapes
//! against CloudFormation's critical path.
//!
//! Run: `make bench-export` (or `scripts/with-emulator.sh
//! target/debug/examples/export_bench [--cases flat5,flat50,tree8] [--json] [--bin
//! PATH]` after `cargo build --workspace --all-targets`; `--bin` measures another build
//! of the CLI, for a before/after comparison).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use cdkd_core::export::execute::MAX_IN_FLIGHT;
use cdkd_core::export::sim::{critical_path_ms, simulate, Shape};
use cdkd_tests::export_bench::{flat, measure, scratch_dir, tree, Measured, Seeded};
use serde_json::{json, Value};

const USAGE: &str = "\
export_bench: what an export costs as a user runs it, on the emulator (make bench-export).
usage: scripts/with-emulator.sh target/debug/examples/export_bench [--cases flat5,flat50,tree8] [--json] [--bin PATH]
  --cases  the shapes to measure (flat5, flat50, tree8; default all three)
  --json   one JSON document on stdout instead of the tables
  --bin    another build of cdkd-flow to measure (a before/after comparison)";

/// `target/debug` (this example lives in `target/debug/examples/`).
fn target_profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("this program's path");
    exe.parent()
        .and_then(|p| p.parent())
        .map(PathBuf::from)
        .expect("target/<profile>/examples")
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// The simulated shape of a case: (children, root resources, child resources).
fn shape(s: &Seeded) -> Shape {
    let children = s.stacks - 1;
    Shape {
        children,
        root_resources: if children > 0 { 1 } else { s.resources as u64 },
        child_resources: 1,
    }
}

fn simulated(s: &Seeded) -> Value {
    let shape = shape(s);
    let sim = simulate(shape, MAX_IN_FLIGHT);
    let cp = critical_path_ms(shape);
    json!({"makespanS": sim.makespan_ms as f64 / 1000.0, "criticalPathS": cp as f64 / 1000.0,
           "ratio": sim.makespan_ms as f64 / cp as f64, "transitions": sim.transitions()})
}

fn report(m: &Measured) -> Value {
    json!({
        "case": m.seeded.case, "stack": m.seeded.stack, "stacks": m.seeded.stacks,
        "resources": m.seeded.resources, "runId": m.run_id, "exitCode": m.exit_code,
        "wallS": m.wall_ms / 1000.0, "requests": m.total(),
        "byService": m.by_service(), "byAction": m.by_action(),
        "byObject": m.requests.iter().filter(|r| r.object != "-")
            .map(|r| json!({"service": r.service, "action": r.action, "object": r.object, "count": r.count}))
            .collect::<Vec<_>>(),
        "cloudFormationS": m.cfn_ms / 1000.0, "cloudFormationOperations": m.cfn_operations,
        "simulated": simulated(&m.seeded),
    })
}

fn print_table(rows: &[Value]) {
    println!(
        "export as a user runs it (cdkd-flow export ... --local -y, no --fast) on the emulator:"
    );
    println!(
        "{:<8} {:>6} {:>9} {:>7} {:>9} {:>8} {:>6} | {:>10} {:>8} {:>6} {:>6}",
        "case",
        "stacks",
        "resources",
        "wall_s",
        "requests",
        "cfn_s",
        "cfn_op",
        "sim_span_s",
        "sim_cp_s",
        "ratio",
        "trans"
    );
    for r in rows {
        let s = &r["simulated"];
        println!(
            "{:<8} {:>6} {:>9} {:>7.2} {:>9} {:>8.3} {:>6} | {:>10.1} {:>8.1} {:>6.2} {:>6}",
            r["case"].as_str().unwrap_or(""),
            r["stacks"].as_u64().unwrap_or(0),
            r["resources"].as_u64().unwrap_or(0),
            r["wallS"].as_f64().unwrap_or(0.0),
            r["requests"].as_u64().unwrap_or(0),
            r["cloudFormationS"].as_f64().unwrap_or(0.0),
            r["cloudFormationOperations"].as_u64().unwrap_or(0),
            s["makespanS"].as_f64().unwrap_or(0.0),
            s["criticalPathS"].as_f64().unwrap_or(0.0),
            s["ratio"].as_f64().unwrap_or(0.0),
            s["transitions"].as_u64().unwrap_or(0),
        );
    }
    println!("\nrequests by service:");
    table(rows, "byService");
    println!("\nrequests by action:");
    table(rows, "byAction");
    println!(
        "\ncfn_s: CloudFormation's own time on the run's operations (first *_IN_PROGRESS to *_COMPLETE stack event, summed);\n\
         sim_*: the simulated-latency model (step 400 ms, change set 12 s, import 25 s + 1 s a resource, update 30 s): makespan, critical path, state transitions."
    );
}

/// One row per key of `field` across the cases, one column per case.
fn table(rows: &[Value], field: &str) {
    let keys: BTreeSet<String> = rows
        .iter()
        .filter_map(|r| r[field].as_object())
        .flat_map(|o| o.keys().cloned())
        .collect();
    print!("{:<44}", "");
    for r in rows {
        print!(" {:>8}", r["case"].as_str().unwrap_or(""));
    }
    println!();
    for k in keys {
        print!("{k:<44}");
        for r in rows {
            print!(" {:>8}", r[field][&k].as_u64().unwrap_or(0));
        }
        println!();
    }
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return;
    }
    let json_out = std::env::args().any(|a| a == "--json");
    let cases = arg("--cases").unwrap_or_else(|| "flat5,flat50,tree8".into());
    let profile = target_profile_dir();
    // `--bin PATH`: another build of the CLI (a before/after comparison).
    let bin = arg("--bin")
        .map(PathBuf::from)
        .unwrap_or_else(|| profile.join("cdkd-flow"));
    assert!(
        bin.is_file(),
        "{} is missing: build it first (cargo build --workspace --all-targets)",
        bin.display()
    );
    let dir = scratch_dir(profile.parent().unwrap_or(&profile));
    let mut rows = Vec::new();
    let mut failed = BTreeMap::new();
    for case in cases.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        let seeded = match case {
            "flat5" => flat(case, 5, &dir).await,
            "flat50" => flat(case, 50, &dir).await,
            "tree8" => tree(case, 8, &dir).await,
            other => panic!("unknown case {other}: flat5, flat50, tree8"),
        };
        let m = measure(&bin, seeded).await;
        if m.exit_code != 0 {
            failed.insert(case.to_string(), m.stderr.clone());
        }
        rows.push(report(&m));
    }
    if json_out {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"cases": rows})).expect("json")
        );
    } else {
        print_table(&rows);
    }
    for (case, stderr) in &failed {
        eprintln!("error: the {case} export failed:\n{stderr}");
    }
    if !failed.is_empty() {
        std::process::exit(1);
    }
}
