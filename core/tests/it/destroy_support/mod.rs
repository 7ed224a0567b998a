//! A model of the destroy workflow over cdkd-core's pure pieces, shared by the
//! simulation example (`examples/destroy_sim.rs`) and the convergence / performance
//! tests. It drives `waves::ready_set` + `decide::decide` the way the `destroy-wave` step
//! does: each call renews nothing (no lock here), polls the deletes in flight, removes
//! finished records from state right after each confirmed delete, starts every ready
//! delete (bounded in-flight count), persists the run record, then either sleeps inline
//! (short waits) or returns a `Wait` until the earliest expected completion.
//!
//! Faults: `Io::crash_at` kills an invocation before its n-th I/O operation (state or
//! progress write, delete start, poll): everything in memory since the last progress
//! write is lost, as in a Lambda that died. `FakeAws::fail_plan` makes the first k delete
//! requests of a resource end FAILED.

#![allow(dead_code)]

use cdkd_core::destroy::decide::{decide, DecideOptions, Decision};
use cdkd_core::destroy::graph::DeleteGraph;
use cdkd_core::destroy::invariant::{check_delete_order, check_state_superset};
use cdkd_core::destroy::model::{
    client_token, decide_wait, first_poll_ms, next_poll_ms, typical_delete_ms, Handle, InFlight,
    Progress, RowOutcome, WaitBounds, WaitDecision,
};
use cdkd_core::destroy::waves::ready_set;
use rand::rngs::StdRng;
use rand::Rng;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Resource types of the random stacks, with a rank that orders the implicit type rules
/// (every rule's earlier type has a lower rank than its later type), `None` = anywhere.
pub const TYPES: &[(&str, Option<u8>)] = &[
    ("AWS::Lambda::Function", Some(0)),
    ("AWS::EC2::Route", Some(0)),
    ("AWS::EC2::SubnetRouteTableAssociation", Some(0)),
    ("AWS::EC2::NatGateway", Some(0)),
    ("AWS::EC2::Subnet", Some(1)),
    ("AWS::EC2::SecurityGroup", Some(1)),
    ("AWS::EC2::RouteTable", Some(1)),
    ("AWS::EC2::VPCGatewayAttachment", Some(1)),
    ("AWS::EC2::InternetGateway", Some(2)),
    ("AWS::EC2::VPC", Some(3)),
    ("AWS::SNS::Topic", None),
    ("AWS::SQS::Queue", None),
    ("AWS::IAM::Role", None),
    ("AWS::IAM::Policy", None),
    ("AWS::S3::Bucket", None),
    ("AWS::DynamoDB::Table", None),
    ("AWS::SSM::Parameter", None),
    ("Custom::Thing", None),
    ("AWS::CDK::Metadata", None),
];

/// A random stack: a cdkd-shaped `resources` object and the true delete latency of each
/// record (typical latency of its type × 0.5–1.5).
pub struct Stack {
    pub resources: Map<String, Value>,
    pub latency_ms: BTreeMap<String, u64>,
    pub retain: BTreeSet<String>,
}

/// Random acyclic stack of `n` records. `typed`: draw AWS types (implicit rules apply,
/// kept acyclic by ranking); otherwise neutral types only. `retain_p`: share of records
/// with `deletionPolicy: Retain`.
pub fn random_stack(rng: &mut StdRng, n: usize, typed: bool, retain_p: f64) -> Stack {
    let mut drawn: Vec<(u8, u32, &str)> = (0..n)
        .map(|_| {
            let (ty, rank) = if typed {
                TYPES[rng.gen_range(0..TYPES.len())]
            } else {
                ("Test::Neutral::Thing", None)
            };
            let rank = rank.unwrap_or_else(|| rng.gen_range(0..4));
            (rank, rng.gen::<u32>(), ty)
        })
        .collect();
    drawn.sort();
    let ids: Vec<String> = (0..n).map(|i| format!("R{i:03}")).collect();
    let mut resources = Map::new();
    let mut latency_ms = BTreeMap::new();
    let mut retain = BTreeSet::new();
    for (i, (_, _, ty)) in drawn.iter().enumerate() {
        // Record i depends on a few later records: i ⇒ j (i deleted first), i < j.
        let k = if i + 1 < n { rng.gen_range(0..=3) } else { 0 };
        let mut deps = BTreeSet::new();
        for _ in 0..k {
            let span = (n - i - 1).min(40);
            deps.insert(ids[i + 1 + rng.gen_range(0..span)].clone());
        }
        if rng.gen_bool(0.05) {
            deps.insert("GhostNotInState".to_string());
        }
        let mut entry = json!({
            "physicalId": format!("phys-{}", ids[i]),
            "resourceType": ty,
            "properties": {"ServiceToken": "arn:aws:lambda:us-east-1:1:function:h"},
            "dependencies": deps.into_iter().collect::<Vec<_>>(),
            "provisionedBy": "sdk",
        });
        if *ty != "AWS::CDK::Metadata" && rng.gen_bool(retain_p) {
            entry["deletionPolicy"] = json!("Retain");
            retain.insert(ids[i].clone());
        }
        let typical = typical_delete_ms(ty);
        let actual = (typical as f64 * rng.gen_range(0.5..1.5)) as u64;
        latency_ms.insert(ids[i].clone(), actual);
        resources.insert(ids[i].clone(), entry);
    }
    Stack {
        resources,
        latency_ms,
        retain,
    }
}

/// A fake AWS: which resources exist, delete requests deduplicated by client token.
pub struct FakeAws {
    pub live: BTreeSet<String>,
    requests: HashMap<String, Req>,
    active: HashMap<String, String>,
    pub latency_ms: BTreeMap<String, u64>,
    /// Remaining failing attempts per resource.
    pub fail_plan: HashMap<String, u32>,
    /// Delete requests accepted (new token) per resource.
    pub accepted: BTreeMap<String, u32>,
    /// Deletes that took effect, per resource (must end at most 1).
    pub effective: BTreeMap<String, u32>,
    pub violations: Vec<String>,
    /// Requests re-sent with a known client token (answered with the same request).
    pub resent: u32,
    pub graph: DeleteGraph,
    pub retain: BTreeSet<String>,
}

struct Req {
    id: String,
    done_at: u64,
    fail: bool,
}

pub enum Start {
    Started,
    AlreadyGone,
}

pub enum Poll {
    Pending,
    Done,
    Failed(String),
}

impl FakeAws {
    pub fn new(stack: &Stack) -> Self {
        let graph = DeleteGraph::build(&stack.resources).expect("valid stack");
        Self {
            live: stack.resources.keys().cloned().collect(),
            requests: HashMap::new(),
            active: HashMap::new(),
            latency_ms: stack.latency_ms.clone(),
            fail_plan: HashMap::new(),
            accepted: BTreeMap::new(),
            effective: BTreeMap::new(),
            violations: Vec::new(),
            resent: 0,
            graph,
            retain: stack.retain.clone(),
        }
    }

    pub fn start(&mut self, id: &str, token: &str, now: u64) -> Start {
        if self.requests.contains_key(token) {
            self.resent += 1;
            return Start::Started; // same ClientToken: the same request
        }
        if !self.live.contains(id) {
            return Start::AlreadyGone;
        }
        if let Some(other) = self.active.get(id) {
            if other != token {
                self.violations
                    .push(format!("second concurrent delete request for {id}"));
            }
        }
        let fail = match self.fail_plan.get_mut(id) {
            Some(k) if *k > 0 => {
                *k -= 1;
                true
            }
            _ => false,
        };
        let done_at = now + self.latency_ms.get(id).copied().unwrap_or(1000);
        self.requests.insert(
            token.to_string(),
            Req {
                id: id.to_string(),
                done_at,
                fail,
            },
        );
        self.active.insert(id.to_string(), token.to_string());
        *self.accepted.entry(id.to_string()).or_default() += 1;
        Start::Started
    }

    pub fn poll(&mut self, token: &str, now: u64) -> Poll {
        let Some(req) = self.requests.get(token) else {
            return Poll::Failed("unknown request token".into());
        };
        if now < req.done_at {
            return Poll::Pending;
        }
        let id = req.id.clone();
        if req.fail {
            self.active.remove(&id);
            return Poll::Failed(format!("injected failure deleting {id}"));
        }
        if self.live.contains(&id) {
            if let Err(e) = check_delete_order(&self.graph, &self.live, &self.retain, &id) {
                self.violations.push(e.to_string());
            }
            self.live.remove(&id);
            *self.effective.entry(id.clone()).or_default() += 1;
        }
        self.active.remove(&id);
        Poll::Done
    }
}

/// Durable objects: `state.json` (resources only here) and `progress.json`.
pub struct Store {
    pub state: Option<Map<String, Value>>,
    pub progress: Progress,
    pub state_writes: u32,
}

/// Crash injection: the invocation dies before its `crash_at`-th I/O operation.
#[derive(Default)]
pub struct Io {
    pub ops: u64,
    pub crash_at: Option<u64>,
}

#[derive(Debug)]
pub struct Crash;

impl Io {
    fn op(&mut self) -> Result<(), Crash> {
        self.ops += 1;
        if self.crash_at == Some(self.ops) {
            self.crash_at = None;
            return Err(Crash);
        }
        Ok(())
    }
}

/// Knobs of the wave step.
#[derive(Clone, Copy)]
pub struct Config {
    /// Most deletes in flight at once.
    pub max_in_flight: usize,
    /// Sleep inside the invocation when the next completion is this close.
    pub inline_max_ms: u64,
    /// Soft budget of one invocation.
    pub budget_ms: u64,
    /// Fixed cost of one invocation (cold start, lock renewal, state read).
    pub invocation_ms: u64,
    /// Cost of one AWS call or S3 write.
    pub call_ms: u64,
    pub bounds: WaitBounds,
    /// Bug injection for the checker's own test: drop the record as soon as its delete
    /// is sent instead of after it is confirmed.
    pub buggy_remove_on_send: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_in_flight: 50,
            inline_max_ms: 5_000,
            budget_ms: 12 * 60_000,
            invocation_ms: 300,
            call_ms: 20,
            bounds: WaitBounds::default(),
            buggy_remove_on_send: false,
        }
    }
}

/// How one wave invocation ended.
pub struct WaveExit {
    pub now: u64,
    pub finished: bool,
    pub wait_seconds: u64,
}

fn remove_record(
    store: &mut Store,
    aws: &FakeAws,
    id: &str,
    io: &mut Io,
    violations: &mut Vec<String>,
) -> Result<(), Crash> {
    io.op()?;
    if let Some(state) = store.state.as_mut() {
        state.shift_remove(id); // keep the other records in place
        store.state_writes += 1;
        let records: BTreeSet<String> = state.keys().cloned().collect();
        if let Err(e) = check_state_superset(&aws.live, Some(&records), &aws.retain) {
            violations.push(e.to_string());
        }
    }
    Ok(())
}

/// One `destroy-wave` invocation. On `Err(Crash)` nothing of `progress` since the last
/// persist survives (the caller keeps `store.progress`, the persisted copy).
pub fn wave(
    store: &mut Store,
    aws: &mut FakeAws,
    io: &mut Io,
    cfg: &Config,
    start_ms: u64,
    violations: &mut Vec<String>,
) -> Result<WaveExit, Crash> {
    let mut now = start_ms + cfg.invocation_ms;
    let deadline = start_ms + cfg.budget_ms;
    let mut progress = store.progress.clone();
    progress.waves += 1;
    let stack = progress.stack.clone();
    let run_id = progress.run_id.clone();
    loop {
        if store.state.is_none() {
            return Ok(WaveExit {
                now,
                finished: true,
                wait_seconds: 0,
            });
        }
        // Send intents persisted by an earlier (crashed) invocation.
        send_intents(store, aws, io, cfg, &mut now, &mut progress, violations)?;
        // Poll the deletes that are due.
        let mut still = Vec::new();
        for mut f in std::mem::take(&mut progress.in_flight) {
            let (request_token, started_ms) = match &f.handle {
                Handle::CloudControl {
                    request_token: Some(t),
                    started_ms,
                    ..
                } => (t.clone(), *started_ms),
                _ => {
                    still.push(f);
                    continue;
                }
            };
            if f.expected_done_ms > now {
                still.push(f);
                continue;
            }
            io.op()?;
            now += cfg.call_ms;
            match aws.poll(&request_token, now) {
                Poll::Pending => {
                    f.expected_done_ms = next_poll_ms(started_ms, now);
                    if let Handle::CloudControl { polls, .. } = &mut f.handle {
                        *polls += 1;
                    }
                    still.push(f);
                }
                Poll::Done => {
                    progress
                        .outcomes
                        .insert(f.logical_id.clone(), RowOutcome::Deleted);
                    remove_record(store, aws, &f.logical_id, io, violations)?;
                    now += cfg.call_ms;
                }
                Poll::Failed(error) => {
                    progress
                        .outcomes
                        .insert(f.logical_id.clone(), RowOutcome::Failed { error });
                }
            }
        }
        progress.in_flight = still;

        // Recompute the ready set from what remains.
        let Some(state) = store.state.as_ref() else {
            continue;
        };
        let graph = DeleteGraph::build(state).expect("valid records");
        let flying: BTreeSet<String> = progress
            .in_flight
            .iter()
            .map(|f| f.logical_id.clone())
            .collect();
        let rs = ready_set(&graph, &progress.outcomes, &flying);
        for id in &rs.remove_from_state {
            remove_record(store, aws, id, io, violations)?;
        }
        for (id, by) in &rs.blocked {
            progress
                .outcomes
                .insert(id.clone(), RowOutcome::Blocked { by: by.clone() });
        }
        let mut changed = !rs.blocked.is_empty() || !rs.remove_from_state.is_empty();
        if !progress.stop_requested {
            let state = store.state.clone().unwrap_or_default();
            let mut intents = false;
            for id in &rs.ready {
                if progress.in_flight.len() >= cfg.max_in_flight || now >= deadline {
                    break;
                }
                let Some(entry) = state.get(id).and_then(Value::as_object) else {
                    continue;
                };
                changed = true;
                match decide(entry, DecideOptions::default()) {
                    Decision::Retain => {
                        progress.outcomes.insert(id.clone(), RowOutcome::Retained);
                    }
                    Decision::NoOp => {
                        progress.outcomes.insert(id.clone(), RowOutcome::Deleted);
                        // Nothing to delete in AWS: the fake drops it at once.
                        aws.live.remove(id);
                        remove_record(store, aws, id, io, violations)?;
                    }
                    Decision::Fail { error } => {
                        progress.outcomes.insert(
                            id.clone(),
                            RowOutcome::Failed {
                                error: error.to_string(),
                            },
                        );
                    }
                    Decision::Skip { reason } => {
                        progress.outcomes.insert(
                            id.clone(),
                            RowOutcome::Skipped {
                                reason: reason.to_string(),
                            },
                        );
                    }
                    Decision::Delete(_) => {
                        let ty = entry
                            .get("resourceType")
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        intents = true;
                        progress.in_flight.push(InFlight {
                            logical_id: id.clone(),
                            handle: Handle::CloudControl {
                                request_token: None,
                                client_token: client_token(&run_id, &stack, id, 0),
                                started_ms: now,
                                polls: 0,
                            },
                            expected_done_ms: first_poll_ms(now, ty),
                        });
                    }
                }
            }
            if intents {
                // Write-ahead: the intents are durable before any request is sent.
                io.op()?;
                now += cfg.call_ms;
                store.progress = progress.clone();
                send_intents(store, aws, io, cfg, &mut now, &mut progress, violations)?;
            }
        }
        // Persist the run record (handles included) before deciding how to wait.
        io.op()?;
        now += cfg.call_ms;
        store.progress = progress.clone();

        if changed {
            continue; // instant outcomes may have made more records ready
        }
        let finished = progress.in_flight.is_empty()
            && (progress.stop_requested || (rs.ready.is_empty() && rs.waiting.is_empty()));
        if finished {
            return Ok(WaveExit {
                now,
                finished: true,
                wait_seconds: 0,
            });
        }
        let left = deadline.saturating_sub(now);
        match decide_wait(
            now,
            &progress.in_flight,
            cfg.inline_max_ms,
            left,
            cfg.bounds,
        ) {
            WaitDecision::Inline { millis } => now += millis,
            WaitDecision::Return { seconds } => {
                return Ok(WaveExit {
                    now,
                    finished: false,
                    wait_seconds: seconds,
                })
            }
        }
    }
}

/// Sends every intent without a request token (same client token: idempotent).
fn send_intents(
    store: &mut Store,
    aws: &mut FakeAws,
    io: &mut Io,
    cfg: &Config,
    now: &mut u64,
    progress: &mut Progress,
    violations: &mut Vec<String>,
) -> Result<(), Crash> {
    let mut gone = Vec::new();
    for f in progress.in_flight.iter_mut() {
        let Handle::CloudControl {
            request_token,
            client_token,
            ..
        } = &mut f.handle
        else {
            continue;
        };
        if request_token.is_some() {
            continue;
        }
        io.op()?;
        *now += cfg.call_ms;
        match aws.start(&f.logical_id, client_token, *now) {
            Start::Started => *request_token = Some(client_token.clone()),
            Start::AlreadyGone => gone.push(f.logical_id.clone()),
        }
        if cfg.buggy_remove_on_send {
            let id = f.logical_id.clone();
            remove_record(store, aws, &id, io, violations)?;
        }
    }
    for id in gone {
        progress.in_flight.retain(|f| f.logical_id != id);
        progress
            .outcomes
            .insert(id.clone(), RowOutcome::AlreadyGone);
        remove_record(store, aws, &id, io, violations)?;
    }
    Ok(())
}

/// `destroy-finish`: delete state.json when nothing must be preserved.
pub fn finish(
    store: &mut Store,
    aws: &FakeAws,
    io: &mut Io,
    violations: &mut Vec<String>,
) -> Result<bool, Crash> {
    let Some(state) = store.state.as_ref() else {
        return Ok(true);
    };
    let preserve = state.keys().any(|id| {
        !matches!(
            store.progress.outcomes.get(id),
            Some(RowOutcome::Retained | RowOutcome::Deleted | RowOutcome::AlreadyGone)
        )
    });
    if preserve {
        return Ok(false);
    }
    io.op()?;
    store.state = None;
    if let Err(e) = check_state_superset(&aws.live, None, &aws.retain) {
        violations.push(e.to_string());
    }
    Ok(true)
}

/// Result of a whole simulated destroy (one run, no faults).
pub struct SimResult {
    pub makespan_ms: u64,
    pub critical_path_ms: u64,
    pub work_bound_ms: u64,
    pub tasks: u32,
    pub waits: u32,
    pub records: usize,
    /// Time spent inside wave invocations (Lambda billing), inline sleeps included.
    pub lambda_ms: u64,
}

impl SimResult {
    /// The lower bound: critical path, or total work over the in-flight cap.
    pub fn bound_ms(&self) -> u64 {
        self.critical_path_ms.max(self.work_bound_ms)
    }
    pub fn ratio(&self) -> f64 {
        self.makespan_ms as f64 / self.bound_ms().max(1) as f64
    }
}

/// Simulates one fault-free destroy of `stack` and measures it.
pub fn simulate(stack: &Stack, cfg: &Config) -> SimResult {
    let mut aws = FakeAws::new(stack);
    let graph = DeleteGraph::build(&stack.resources).expect("valid");
    graph.check_acyclic().expect("acyclic");
    let lat = |i: usize| {
        let id = &graph.nodes()[i].logical_id;
        if stack.retain.contains(id) {
            0
        } else {
            stack.latency_ms[id]
        }
    };
    let critical_path_ms = graph.critical_path(lat);
    let total: u64 = (0..graph.len()).map(lat).sum();
    let work_bound_ms = total / cfg.max_in_flight as u64;
    let mut store = Store {
        state: Some(stack.resources.clone()),
        progress: Progress {
            run_id: "sim".into(),
            stack: "Sim".into(),
            region: "us-east-1".into(),
            ..Default::default()
        },
        state_writes: 0,
    };
    let mut io = Io::default();
    let mut violations = Vec::new();
    let (mut t, mut tasks, mut waits) = (0u64, 1u32, 0u32); // plan task
    let mut lambda_ms = 0;
    loop {
        tasks += 1;
        let exit = wave(&mut store, &mut aws, &mut io, cfg, t, &mut violations).expect("no crash");
        lambda_ms += exit.now - t;
        t = exit.now;
        if exit.finished {
            break;
        }
        if exit.wait_seconds > 0 {
            waits += 1;
            t += exit.wait_seconds * 1000;
        }
    }
    tasks += 1; // finish task
    assert!(finish(&mut store, &aws, &mut io, &mut violations).expect("no crash"));
    assert!(
        violations.is_empty() && aws.violations.is_empty(),
        "{violations:?} {:?}",
        aws.violations
    );
    SimResult {
        makespan_ms: t,
        critical_path_ms,
        work_bound_ms,
        tasks,
        waits,
        records: stack.resources.len(),
        lambda_ms,
    }
}
