//! `make bench-export-sim`: simulated exports of a root with 0–16 nested children, driven
//! by cdkd-core's execution decisions (`cdkd_core::export::sim`, the model), against a
//! CloudFormation whose change sets and stack operations take fixed simulated times.
//! Prints, per tree, the makespan against the critical path (the longest child's phases,
//! then the root's), the same export with one stack in flight at a time (siblings one
//! after the other), and the Step Functions state transitions (docs/export.md, "Nested stacks (export-flip, export-adopt)").
//!
//! Run: `cargo run -p cdkd-core --example export_sim`.

use cdkd_core::export::execute::MAX_IN_FLIGHT;
use cdkd_core::export::sim::{critical_path_ms, simulate, Shape, LAT};

/// Resources per stack.
const RESOURCES: u64 = 10;

fn main() {
    println!(
        "latencies: step {} ms, change set {} s, import {} s + {} s/resource ({} resources/stack), update {} s, flip {} s; in flight <= {}",
        LAT.step_ms,
        LAT.change_set_ms / 1000,
        LAT.import_ms / 1000,
        LAT.per_resource_ms / 1000,
        RESOURCES,
        LAT.update_ms / 1000,
        LAT.flip_ms / 1000,
        MAX_IN_FLIGHT
    );
    println!(
        "{:>8} {:>6} {:>8} {:>11} {:>7} {:>13} {:>7} {:>6} {:>6} {:>7}",
        "children",
        "stacks",
        "cp_s",
        "makespan_s",
        "ratio",
        "sequential_s",
        "ratio",
        "tasks",
        "waits",
        "trans"
    );
    for children in [0usize, 1, 2, 4, 8, 16] {
        let shape = Shape {
            children,
            root_resources: RESOURCES,
            child_resources: RESOURCES,
        };
        let cp = critical_path_ms(shape) as f64 / 1000.0;
        let par = simulate(shape, MAX_IN_FLIGHT);
        let seq = simulate(shape, 1);
        let trans = par.transitions();
        println!(
            "{:>8} {:>6} {:>8.1} {:>11.1} {:>7.2} {:>13.1} {:>7.2} {:>6} {:>6} {:>7}",
            children,
            children + 1,
            cp,
            par.makespan_ms as f64 / 1000.0,
            par.makespan_ms as f64 / 1000.0 / cp,
            seq.makespan_ms as f64 / 1000.0,
            seq.makespan_ms as f64 / 1000.0 / cp,
            par.tasks,
            par.waits,
            trans
        );
    }
}
