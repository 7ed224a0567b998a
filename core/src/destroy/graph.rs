//! The delete graph of one stack (docs/destroy.md, "The delete graph"): nodes are the records, an edge `A ⇒ B`
//! means "A must be deleted before B". Edges come from (a) recorded `dependencies` and
//! leftover `Ref` / `Fn::GetAtt` in `properties`, (b) the stack-wide type rules of
//! [`IMPLICIT_DELETE_RULES`], (c) composite-alarm rules. Cycles are found (docs/destroy.md, "Cycles")
//! and reported as `a -> b -> a` before anything is deleted.

use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// One stack-wide implicit ordering rule: every `earlier` record ⇒ every `later` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImplicitRule {
    /// Row number in docs/destroy.md, "The delete graph" (b).
    pub number: u8,
    /// Deleted later (every record of this type).
    pub later: &'static str,
    /// Deleted earlier (every record of this type).
    pub earlier: &'static str,
    pub why: &'static str,
}

const fn rule(
    number: u8,
    later: &'static str,
    earlier: &'static str,
    why: &'static str,
) -> ImplicitRule {
    ImplicitRule {
        number,
        later,
        earlier,
        why,
    }
}

/// docs/destroy.md, "The delete graph" (b), cdkd's `IMPLICIT_DELETE_DEPENDENCIES`.
pub const IMPLICIT_DELETE_RULES: &[ImplicitRule] = &[
    rule(
        1,
        "AWS::EC2::InternetGateway",
        "AWS::EC2::VPCGatewayAttachment",
        "a gateway still attached to a VPC cannot be deleted",
    ),
    rule(
        2,
        "AWS::EC2::InternetGateway",
        "AWS::EC2::NatGateway",
        "a NAT gateway's Elastic IP keeps public addresses mapped in the VPC",
    ),
    rule(
        3,
        "AWS::EC2::VPCGatewayAttachment",
        "AWS::EC2::NatGateway",
        "the detach fails while a NAT gateway maps public addresses",
    ),
    rule(
        4,
        "AWS::Events::EventBus",
        "AWS::Events::Rule",
        "a bus that still has rules cannot be deleted",
    ),
    rule(
        5,
        "AWS::Athena::WorkGroup",
        "AWS::Athena::NamedQuery",
        "a workgroup holding saved queries cannot be deleted",
    ),
    rule(
        6,
        "AWS::CloudFront::ResponseHeadersPolicy",
        "AWS::CloudFront::Distribution",
        "policy in use by a distribution",
    ),
    rule(
        7,
        "AWS::CloudFront::CachePolicy",
        "AWS::CloudFront::Distribution",
        "policy in use by a distribution",
    ),
    rule(
        8,
        "AWS::CloudFront::OriginAccessControl",
        "AWS::CloudFront::Distribution",
        "origin access control in use by a distribution",
    ),
    rule(
        9,
        "AWS::EC2::VPC",
        "AWS::EC2::Subnet",
        "VPC delete fails with DependencyViolation while a subnet exists",
    ),
    rule(
        10,
        "AWS::EC2::VPC",
        "AWS::EC2::SecurityGroup",
        "VPC delete fails with DependencyViolation while a security group exists",
    ),
    rule(
        11,
        "AWS::EC2::VPC",
        "AWS::EC2::InternetGateway",
        "VPC delete fails with DependencyViolation while an internet gateway exists",
    ),
    rule(
        12,
        "AWS::EC2::VPC",
        "AWS::EC2::EgressOnlyInternetGateway",
        "VPC delete fails with DependencyViolation while an egress-only gateway exists",
    ),
    rule(
        13,
        "AWS::EC2::VPC",
        "AWS::EC2::VPCGatewayAttachment",
        "VPC delete fails with DependencyViolation while a gateway is attached",
    ),
    rule(
        14,
        "AWS::EC2::VPC",
        "AWS::EC2::RouteTable",
        "VPC delete fails with DependencyViolation while a route table exists",
    ),
    rule(
        15,
        "AWS::EC2::Subnet",
        "AWS::EC2::SubnetRouteTableAssociation",
        "the association must be gone first",
    ),
    rule(
        16,
        "AWS::EC2::Subnet",
        "AWS::Lambda::Function",
        "a VPC Lambda's network interfaces linger in the subnet after the function is deleted",
    ),
    rule(
        17,
        "AWS::EC2::RouteTable",
        "AWS::EC2::Route",
        "routes must be removed first",
    ),
    rule(
        18,
        "AWS::EC2::RouteTable",
        "AWS::EC2::SubnetRouteTableAssociation",
        "associations must be removed first",
    ),
    rule(
        19,
        "AWS::EC2::SecurityGroup",
        "AWS::EC2::SecurityGroupIngress",
        "standalone rules first",
    ),
    rule(
        20,
        "AWS::EC2::SecurityGroup",
        "AWS::EC2::SecurityGroupEgress",
        "standalone rules first",
    ),
    rule(
        21,
        "AWS::EC2::SecurityGroup",
        "AWS::Lambda::Function",
        "a VPC Lambda's network interfaces linger in the security group",
    ),
];

/// Why an edge exists (first reason found wins; for `--dry-run` explanations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeReason {
    /// `dependencies` of the earlier record names the later one.
    Recorded,
    /// A leftover `Ref` / `Fn::GetAtt` in the earlier record's properties.
    PropertyRef,
    /// Implicit type rule number (docs/destroy.md, "The delete graph" b).
    TypeRule(u8),
    /// The earlier composite alarm's `AlarmRule` names the later alarm.
    CompositeAlarm,
}

/// Something ignored while building the graph (cdkd logs these as warnings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphWarning {
    /// `dependencies` of `from` names `missing`, which
    /// has no record (docs/destroy.md, "Checks" statement 13).
    UnknownDependency { from: String, missing: String },
    /// A leftover `Ref` / `Fn::GetAtt` in `from`'s properties names an id with no record.
    UnknownPropertyRef { from: String, missing: String },
    /// `dependencies` is present but not an array of strings; non-strings are ignored.
    MalformedDependencies { from: String },
}

/// A record the graph cannot be built from (refused by name, see `refusals`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DamagedResources {
    EntryNotObject { logical_id: String },
    EntryWithoutType { logical_id: String },
}

impl std::error::Error for DamagedResources {}

/// One or more dependency cycles, each as a closed path (`[a, b, a]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleError {
    pub cycles: Vec<Vec<String>>,
}

impl std::error::Error for CycleError {}

/// A record as a graph node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub logical_id: String,
    pub resource_type: String,
}

/// The delete graph. Node indices follow the order of the `resources` object.
#[derive(Debug, Clone, Default)]
pub struct DeleteGraph {
    nodes: Vec<Node>,
    index: HashMap<String, usize>,
    /// `succ[a]` = nodes that `a` must be deleted before (sorted, unique).
    succ: Vec<Vec<usize>>,
    /// `pred[b]` = nodes that must be deleted before `b` (sorted, unique).
    pred: Vec<Vec<usize>>,
    reasons: BTreeMap<(usize, usize), EdgeReason>,
    warnings: Vec<GraphWarning>,
}

impl DeleteGraph {
    /// Builds the graph from a record's `resources` object.
    pub fn build(resources: &Map<String, Value>) -> Result<Self, DamagedResources> {
        let mut g = DeleteGraph::default();
        // JavaScript key order (integer-like keys first), as cdkd iterates records.
        let entries = crate::json::ordered_entries(resources);
        for &(id, entry) in &entries {
            let obj = entry
                .as_object()
                .ok_or_else(|| DamagedResources::EntryNotObject {
                    logical_id: id.clone(),
                })?;
            let ty = obj
                .get("resourceType")
                .and_then(Value::as_str)
                .ok_or_else(|| DamagedResources::EntryWithoutType {
                    logical_id: id.clone(),
                })?;
            g.index.insert(id.clone(), g.nodes.len());
            g.nodes.push(Node {
                logical_id: id.clone(),
                resource_type: ty.to_string(),
            });
        }
        let n = g.nodes.len();
        let mut edges: BTreeMap<(usize, usize), EdgeReason> = BTreeMap::new();
        let add = |e: &mut BTreeMap<(usize, usize), EdgeReason>, a: usize, b: usize, r| {
            e.entry((a, b)).or_insert(r);
        };

        // (a) recorded dependencies and leftover intrinsics.
        for (a, &(id, entry)) in entries.iter().enumerate() {
            let Some(obj) = entry.as_object() else {
                continue; // refused in the first pass
            };
            match obj.get("dependencies") {
                None | Some(Value::Null) => {}
                Some(Value::Array(deps)) => {
                    let mut malformed = false;
                    for d in deps {
                        let Some(dep) = d.as_str() else {
                            malformed = true;
                            continue;
                        };
                        match g.index.get(dep) {
                            Some(&b) => add(&mut edges, a, b, EdgeReason::Recorded),
                            None => g.warnings.push(GraphWarning::UnknownDependency {
                                from: id.clone(),
                                missing: dep.to_string(),
                            }),
                        }
                    }
                    if malformed {
                        g.warnings
                            .push(GraphWarning::MalformedDependencies { from: id.clone() });
                    }
                }
                Some(_) => g
                    .warnings
                    .push(GraphWarning::MalformedDependencies { from: id.clone() }),
            }
            if let Some(props) = obj.get("properties") {
                let mut refs = Vec::new();
                collect_intrinsic_refs(props, &mut refs, 0);
                for r in refs {
                    match g.index.get(&r) {
                        Some(&b) => add(&mut edges, a, b, EdgeReason::PropertyRef),
                        None if is_pseudo(&r) => {}
                        None => g.warnings.push(GraphWarning::UnknownPropertyRef {
                            from: id.clone(),
                            missing: r,
                        }),
                    }
                }
            }
        }

        // (b) stack-wide type rules.
        let mut by_type: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, node) in g.nodes.iter().enumerate() {
            by_type
                .entry(node.resource_type.as_str())
                .or_default()
                .push(i);
        }
        for r in IMPLICIT_DELETE_RULES {
            let (Some(earlier), Some(later)) = (by_type.get(r.earlier), by_type.get(r.later))
            else {
                continue;
            };
            for &a in earlier {
                for &b in later {
                    if a != b {
                        add(&mut edges, a, b, EdgeReason::TypeRule(r.number));
                    }
                }
            }
        }

        // (c) composite alarms.
        for (a, b) in composite_alarm_edges(resources, &g.index) {
            add(&mut edges, a, b, EdgeReason::CompositeAlarm);
        }

        g.succ = vec![Vec::new(); n];
        g.pred = vec![Vec::new(); n];
        for &(a, b) in edges.keys() {
            g.succ[a].push(b);
            g.pred[b].push(a);
        }
        for p in &mut g.pred {
            p.sort_unstable();
        }
        g.reasons = edges;
        Ok(g)
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn index_of(&self, logical_id: &str) -> Option<usize> {
        self.index.get(logical_id).copied()
    }

    pub fn warnings(&self) -> &[GraphWarning] {
        &self.warnings
    }

    /// Nodes that `i` must be deleted before.
    pub fn successors(&self, i: usize) -> &[usize] {
        &self.succ[i]
    }

    /// Nodes that must be deleted before `i`.
    pub fn predecessors(&self, i: usize) -> &[usize] {
        &self.pred[i]
    }

    /// Whether `a` must be deleted before `b` (a direct edge) and why.
    pub fn edge(&self, a: &str, b: &str) -> Option<EdgeReason> {
        let (a, b) = (self.index_of(a)?, self.index_of(b)?);
        self.reasons.get(&(a, b)).copied()
    }

    /// Every edge as `(earlier, later, reason)` in index order.
    pub fn edges(&self) -> impl Iterator<Item = (&str, &str, EdgeReason)> + '_ {
        self.reasons.iter().map(|(&(a, b), &r)| {
            (
                self.nodes[a].logical_id.as_str(),
                self.nodes[b].logical_id.as_str(),
                r,
            )
        })
    }

    /// Refuses a graph with a cycle (docs/destroy.md, "Cycles"), naming each cycle's path.
    pub fn check_acyclic(&self) -> Result<(), CycleError> {
        let cycles = self.find_cycles();
        if cycles.is_empty() {
            Ok(())
        } else {
            Err(CycleError { cycles })
        }
    }

    /// One closed path per strongly connected component that contains a cycle.
    pub fn find_cycles(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        for comp in tarjan_scc(&self.succ) {
            let in_comp: std::collections::HashSet<usize> = comp.iter().copied().collect();
            let start = *comp.iter().min().expect("components are non-empty");
            if comp.len() == 1 && !self.succ[start].contains(&start) {
                continue;
            }
            // Shortest path start -> ... -> start inside the component (BFS).
            let mut prev: HashMap<usize, usize> = HashMap::new();
            let mut queue = std::collections::VecDeque::from([start]);
            let mut closing = None;
            'bfs: while let Some(u) = queue.pop_front() {
                for &v in &self.succ[u] {
                    if !in_comp.contains(&v) {
                        continue;
                    }
                    if v == start {
                        closing = Some(u);
                        break 'bfs;
                    }
                    if let std::collections::hash_map::Entry::Vacant(e) = prev.entry(v) {
                        e.insert(u);
                        queue.push_back(v);
                    }
                }
            }
            let Some(mut u) = closing else { continue };
            // Walk back from the node that closes the cycle to `start`.
            let mut path = vec![u];
            while u != start {
                u = prev[&u];
                path.push(u);
            }
            path.reverse();
            path.push(start);
            out.push(
                path.into_iter()
                    .map(|i| self.nodes[i].logical_id.clone())
                    .collect(),
            );
        }
        out.sort();
        out
    }

    /// Longest weighted path (critical path) given a duration per node: a lower bound on
    /// any schedule's makespan. Assumes an acyclic graph.
    pub fn critical_path(&self, duration: impl Fn(usize) -> u64) -> u64 {
        let order = self.topo_order();
        let mut finish = vec![0u64; self.len()];
        let mut best = 0;
        for i in order {
            let start = self.pred[i].iter().map(|&p| finish[p]).max().unwrap_or(0);
            finish[i] = start + duration(i);
            best = best.max(finish[i]);
        }
        best
    }

    /// Delete order (Kahn); nodes on a cycle are left out.
    pub fn topo_order(&self) -> Vec<usize> {
        let mut indeg: Vec<usize> = self.pred.iter().map(Vec::len).collect();
        let mut ready: std::collections::BTreeSet<usize> =
            (0..self.len()).filter(|&i| indeg[i] == 0).collect();
        let mut out = Vec::with_capacity(self.len());
        while let Some(i) = ready.pop_first() {
            out.push(i);
            for &s in &self.succ[i] {
                indeg[s] -= 1;
                if indeg[s] == 0 {
                    ready.insert(s);
                }
            }
        }
        out
    }
}

fn is_pseudo(id: &str) -> bool {
    id.starts_with("AWS::")
}

/// Leftover `{"Ref": "X"}` and `{"Fn::GetAtt": ["X", ...] | "X.Attr"}` anywhere in a value.
fn collect_intrinsic_refs(v: &Value, out: &mut Vec<String>, depth: usize) {
    if depth > 256 {
        return;
    }
    match v {
        Value::Array(items) => {
            for i in items {
                collect_intrinsic_refs(i, out, depth + 1);
            }
        }
        Value::Object(obj) => {
            if obj.len() == 1 {
                if let Some(Value::String(target)) = obj.get("Ref") {
                    out.push(target.clone());
                    return;
                }
                match obj.get("Fn::GetAtt") {
                    Some(Value::Array(parts)) => {
                        if let Some(Value::String(target)) = parts.first() {
                            out.push(target.clone());
                        }
                    }
                    Some(Value::String(dotted)) => {
                        if let Some((target, _)) = dotted.split_once('.') {
                            out.push(target.to_string());
                        }
                    }
                    _ => {}
                }
            }
            for i in obj.values() {
                collect_intrinsic_refs(i, out, depth + 1);
            }
        }
        _ => {}
    }
}

/// Alarm names referenced by a composite alarm's `AlarmRule` (docs/destroy.md, "The delete graph" c): every
/// `ALARM(x)` / `OK(x)` / `INSUFFICIENT_DATA(x)` call (case-insensitive, optional
/// whitespace), one pair of surrounding quotes stripped, `...:alarm:<name>` reduced to
/// `<name>`.
pub fn alarm_rule_names(rule: &str) -> Vec<String> {
    const FUNCS: [&str; 3] = ["INSUFFICIENT_DATA", "ALARM", "OK"];
    let bytes = rule.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let boundary = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let matched = boundary
            .then(|| {
                FUNCS.iter().find(|f| {
                    bytes.len() >= i + f.len()
                        && bytes[i..i + f.len()].eq_ignore_ascii_case(f.as_bytes())
                })
            })
            .flatten();
        let Some(f) = matched else {
            i += 1;
            continue;
        };
        let mut j = i + f.len();
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        if j >= bytes.len() || bytes[j] != b'(' {
            i += f.len();
            continue;
        }
        let Some(close) = rule[j + 1..].find(')') else {
            break;
        };
        let arg = rule[j + 1..j + 1 + close].trim();
        let arg = strip_one_quote_pair(arg);
        let name = match arg.find(":alarm:") {
            Some(p) if arg.starts_with("arn:") => &arg[p + ":alarm:".len()..],
            _ => arg,
        };
        if !name.is_empty() {
            out.push(name.to_string());
        }
        i = j + 1 + close + 1;
    }
    out
}

fn strip_one_quote_pair(s: &str) -> &str {
    for q in ['"', '\''] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            return &s[1..s.len() - 1];
        }
    }
    s
}

fn composite_alarm_edges(
    resources: &Map<String, Value>,
    index: &HashMap<String, usize>,
) -> Vec<(usize, usize)> {
    const ALARM: &str = "AWS::CloudWatch::Alarm";
    const COMPOSITE: &str = "AWS::CloudWatch::CompositeAlarm";
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (id, entry) in resources {
        let Some(obj) = entry.as_object() else {
            continue;
        };
        let ty = obj.get("resourceType").and_then(Value::as_str);
        if ty != Some(ALARM) && ty != Some(COMPOSITE) {
            continue;
        }
        let props = obj.get("properties").and_then(Value::as_object);
        let name = match props.and_then(|p| p.get("AlarmName")) {
            Some(v) => v.as_str(),
            None => obj.get("physicalId").and_then(Value::as_str),
        };
        if let (Some(name), Some(&i)) = (name, index.get(id)) {
            by_name.entry(name).or_default().push(i);
        }
    }
    let mut edges = Vec::new();
    for (id, entry) in resources {
        let Some(obj) = entry.as_object() else {
            continue;
        };
        if obj.get("resourceType").and_then(Value::as_str) != Some(COMPOSITE) {
            continue;
        }
        let Some(rule) = obj
            .get("properties")
            .and_then(|p| p.get("AlarmRule"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let Some(&c) = index.get(id) else { continue };
        for name in alarm_rule_names(rule) {
            for &hit in by_name.get(name.as_str()).into_iter().flatten() {
                if hit != c {
                    edges.push((c, hit));
                }
            }
        }
    }
    edges
}

/// Iterative Tarjan: strongly connected components of `succ`.
fn tarjan_scc(succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = succ.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut comps = Vec::new();
    let mut next = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut call: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut k)) = call.last_mut() {
            if *k < succ[v].len() {
                let w = succ[v][*k];
                *k += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(parent, _)) = call.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    comps.push(comp);
                }
            }
        }
    }
    comps
}

impl fmt::Display for EdgeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EdgeReason::Recorded => f.write_str("recorded dependency"),
            EdgeReason::PropertyRef => f.write_str("reference in properties"),
            EdgeReason::TypeRule(n) => write!(f, "type rule #{n}"),
            EdgeReason::CompositeAlarm => f.write_str("composite alarm rule"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn res(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn g(v: Value) -> DeleteGraph {
        DeleteGraph::build(&res(v)).unwrap()
    }

    /// Records of the two types of a rule, with no recorded edges; the rule must make the
    /// earlier-type record precede the later-type one.
    fn check_rule(number: u8, later: &str, earlier: &str) {
        let r = IMPLICIT_DELETE_RULES
            .iter()
            .find(|r| r.number == number)
            .unwrap();
        assert_eq!(
            (r.later, r.earlier),
            (later, earlier),
            "rule {number} table row"
        );
        let graph = g(json!({
            "Later": {"resourceType": later, "physicalId": "l"},
            "Earlier": {"resourceType": earlier, "physicalId": "e"},
            "Other": {"resourceType": "AWS::SNS::Topic", "physicalId": "o"}
        }));
        assert_eq!(
            graph.edge("Earlier", "Later"),
            Some(EdgeReason::TypeRule(number))
        );
        assert_eq!(graph.edge("Later", "Earlier"), None);
        assert_eq!(
            graph.edges().count(),
            1,
            "rule {number} adds exactly one edge"
        );
    }

    #[test]
    fn implicit_rule_1_internet_gateway_after_gateway_attachment() {
        check_rule(
            1,
            "AWS::EC2::InternetGateway",
            "AWS::EC2::VPCGatewayAttachment",
        );
    }
    #[test]
    fn implicit_rule_2_internet_gateway_after_nat_gateway() {
        check_rule(2, "AWS::EC2::InternetGateway", "AWS::EC2::NatGateway");
    }
    #[test]
    fn implicit_rule_3_gateway_attachment_after_nat_gateway() {
        check_rule(3, "AWS::EC2::VPCGatewayAttachment", "AWS::EC2::NatGateway");
    }
    #[test]
    fn implicit_rule_4_event_bus_after_rule() {
        check_rule(4, "AWS::Events::EventBus", "AWS::Events::Rule");
    }
    #[test]
    fn implicit_rule_5_athena_workgroup_after_named_query() {
        check_rule(5, "AWS::Athena::WorkGroup", "AWS::Athena::NamedQuery");
    }
    #[test]
    fn implicit_rule_6_response_headers_policy_after_distribution() {
        check_rule(
            6,
            "AWS::CloudFront::ResponseHeadersPolicy",
            "AWS::CloudFront::Distribution",
        );
    }
    #[test]
    fn implicit_rule_7_cache_policy_after_distribution() {
        check_rule(
            7,
            "AWS::CloudFront::CachePolicy",
            "AWS::CloudFront::Distribution",
        );
    }
    #[test]
    fn implicit_rule_8_origin_access_control_after_distribution() {
        check_rule(
            8,
            "AWS::CloudFront::OriginAccessControl",
            "AWS::CloudFront::Distribution",
        );
    }
    #[test]
    fn implicit_rule_9_vpc_after_subnet() {
        check_rule(9, "AWS::EC2::VPC", "AWS::EC2::Subnet");
    }
    #[test]
    fn implicit_rule_10_vpc_after_security_group() {
        check_rule(10, "AWS::EC2::VPC", "AWS::EC2::SecurityGroup");
    }
    #[test]
    fn implicit_rule_11_vpc_after_internet_gateway() {
        check_rule(11, "AWS::EC2::VPC", "AWS::EC2::InternetGateway");
    }
    #[test]
    fn implicit_rule_12_vpc_after_egress_only_internet_gateway() {
        check_rule(12, "AWS::EC2::VPC", "AWS::EC2::EgressOnlyInternetGateway");
    }
    #[test]
    fn implicit_rule_13_vpc_after_gateway_attachment() {
        check_rule(13, "AWS::EC2::VPC", "AWS::EC2::VPCGatewayAttachment");
    }
    #[test]
    fn implicit_rule_14_vpc_after_route_table() {
        check_rule(14, "AWS::EC2::VPC", "AWS::EC2::RouteTable");
    }
    #[test]
    fn implicit_rule_15_subnet_after_route_table_association() {
        check_rule(
            15,
            "AWS::EC2::Subnet",
            "AWS::EC2::SubnetRouteTableAssociation",
        );
    }
    #[test]
    fn implicit_rule_16_subnet_after_lambda() {
        check_rule(16, "AWS::EC2::Subnet", "AWS::Lambda::Function");
    }
    #[test]
    fn implicit_rule_17_route_table_after_route() {
        check_rule(17, "AWS::EC2::RouteTable", "AWS::EC2::Route");
    }
    #[test]
    fn implicit_rule_18_route_table_after_route_table_association() {
        check_rule(
            18,
            "AWS::EC2::RouteTable",
            "AWS::EC2::SubnetRouteTableAssociation",
        );
    }
    #[test]
    fn implicit_rule_19_security_group_after_ingress() {
        check_rule(
            19,
            "AWS::EC2::SecurityGroup",
            "AWS::EC2::SecurityGroupIngress",
        );
    }
    #[test]
    fn implicit_rule_20_security_group_after_egress() {
        check_rule(
            20,
            "AWS::EC2::SecurityGroup",
            "AWS::EC2::SecurityGroupEgress",
        );
    }
    #[test]
    fn implicit_rule_21_security_group_after_lambda() {
        check_rule(21, "AWS::EC2::SecurityGroup", "AWS::Lambda::Function");
    }

    #[test]
    fn implicit_rules_table_has_21_rows_none_keyed_on_itself_or_nat() {
        assert_eq!(IMPLICIT_DELETE_RULES.len(), 21);
        for (i, r) in IMPLICIT_DELETE_RULES.iter().enumerate() {
            assert_eq!(r.number as usize, i + 1);
            assert_ne!(r.later, r.earlier);
            assert_ne!(r.later, "AWS::EC2::NatGateway");
        }
    }

    #[test]
    fn implicit_rules_are_stack_wide_every_earlier_before_every_later() {
        let graph = g(json!({
            "F1": {"resourceType": "AWS::Lambda::Function"},
            "F2": {"resourceType": "AWS::Lambda::Function"},
            "S1": {"resourceType": "AWS::EC2::Subnet"},
            "S2": {"resourceType": "AWS::EC2::Subnet"}
        }));
        for f in ["F1", "F2"] {
            for s in ["S1", "S2"] {
                assert_eq!(graph.edge(f, s), Some(EdgeReason::TypeRule(16)));
            }
        }
    }

    #[test]
    fn recorded_dependency_deletes_dependent_first_statement_1() {
        let graph = g(json!({
            "Fn": {"resourceType": "AWS::Lambda::Function", "dependencies": ["Role"]},
            "Role": {"resourceType": "AWS::IAM::Role"}
        }));
        assert_eq!(graph.edge("Fn", "Role"), Some(EdgeReason::Recorded));
        assert_eq!(graph.edge("Role", "Fn"), None);
    }

    #[test]
    fn dependency_without_record_is_ignored_with_warning_statement_13() {
        let graph = g(json!({
            "A": {"resourceType": "AWS::SNS::Topic", "dependencies": ["Ghost", "B"]},
            "B": {"resourceType": "AWS::SNS::Topic"}
        }));
        assert_eq!(graph.edges().count(), 1);
        assert_eq!(
            graph.warnings(),
            &[GraphWarning::UnknownDependency {
                from: "A".into(),
                missing: "Ghost".into()
            }]
        );
        assert!(graph.check_acyclic().is_ok());
    }

    #[test]
    fn leftover_ref_and_getatt_in_properties_add_edges_rule_2_4_a() {
        let graph = g(json!({
            "A": {"resourceType": "AWS::SNS::Topic", "properties": {
                "X": {"Ref": "B"},
                "Y": [{"Fn::GetAtt": ["C", "Arn"]}],
                "Z": {"Nested": {"Fn::GetAtt": "D.Arn"}},
                "P": {"Ref": "AWS::Region"},
                "Q": {"Ref": "Missing"}
            }},
            "B": {"resourceType": "AWS::SNS::Topic"},
            "C": {"resourceType": "AWS::SNS::Topic"},
            "D": {"resourceType": "AWS::SNS::Topic"}
        }));
        for t in ["B", "C", "D"] {
            assert_eq!(graph.edge("A", t), Some(EdgeReason::PropertyRef));
        }
        assert_eq!(
            graph.warnings(),
            &[GraphWarning::UnknownPropertyRef {
                from: "A".into(),
                missing: "Missing".into()
            }]
        );
    }

    #[test]
    fn composite_alarm_before_named_alarms_statement_10() {
        let graph = g(json!({
            "C": {"resourceType": "AWS::CloudWatch::CompositeAlarm",
                  "properties": {"AlarmRule": "ALARM(\"a\") OR OK('b')"}},
            "A": {"resourceType": "AWS::CloudWatch::Alarm", "properties": {"AlarmName": "a"}},
            "B": {"resourceType": "AWS::CloudWatch::Alarm", "properties": {"AlarmName": "b"}}
        }));
        assert_eq!(graph.edge("C", "A"), Some(EdgeReason::CompositeAlarm));
        assert_eq!(graph.edge("C", "B"), Some(EdgeReason::CompositeAlarm));
    }

    #[test]
    fn composite_alarm_arn_matches_physical_id_statement_11() {
        let graph = g(json!({
            "C": {"resourceType": "AWS::CloudWatch::CompositeAlarm",
                  "properties": {"AlarmRule": "alarm ( arn:aws:cloudwatch:us-east-1:1:alarm:x )"}},
            "X": {"resourceType": "AWS::CloudWatch::Alarm", "physicalId": "x", "properties": {}}
        }));
        assert_eq!(graph.edge("C", "X"), Some(EdgeReason::CompositeAlarm));
    }

    #[test]
    fn composite_alarm_unknown_name_adds_nothing_statement_12() {
        let graph = g(json!({
            "C": {"resourceType": "AWS::CloudWatch::CompositeAlarm",
                  "properties": {"AlarmRule": "ALARM(nothere) AND TRUE"}},
            "X": {"resourceType": "AWS::CloudWatch::Alarm", "physicalId": "x"}
        }));
        assert_eq!(graph.edges().count(), 0);
        assert!(graph.check_acyclic().is_ok());
    }

    #[test]
    fn composite_alarm_chains_and_ignores_self_rule_2_4_c() {
        let graph = g(json!({
            "Top": {"resourceType": "AWS::CloudWatch::CompositeAlarm", "physicalId": "top",
                    "properties": {"AlarmRule": "ALARM(mid) OR ALARM(top)"}},
            "Mid": {"resourceType": "AWS::CloudWatch::CompositeAlarm", "physicalId": "mid",
                    "properties": {"AlarmRule": "INSUFFICIENT_DATA(leaf)"}},
            "Leaf": {"resourceType": "AWS::CloudWatch::Alarm", "physicalId": "leaf"}
        }));
        assert_eq!(graph.edge("Top", "Mid"), Some(EdgeReason::CompositeAlarm));
        assert_eq!(graph.edge("Mid", "Leaf"), Some(EdgeReason::CompositeAlarm));
        assert_eq!(graph.edge("Top", "Top"), None);
        assert!(graph.check_acyclic().is_ok());
    }

    #[test]
    fn alarm_rule_parser_handles_case_spacing_quotes_and_word_boundaries() {
        assert_eq!(
            alarm_rule_names("Alarm ( 'a' ) or ok(\"b\") OR insufficient_data(c) AND NOTOK(d)"),
            vec!["a", "b", "c"]
        );
        assert_eq!(alarm_rule_names("TRUE AND FALSE"), Vec::<String>::new());
    }

    #[test]
    fn cycle_is_refused_naming_its_path_statement_14() {
        let graph = g(json!({
            "A": {"resourceType": "AWS::SNS::Topic", "dependencies": ["B"]},
            "B": {"resourceType": "AWS::SNS::Topic", "dependencies": ["A"]},
            "C": {"resourceType": "AWS::SNS::Topic"}
        }));
        let err = graph.check_acyclic().unwrap_err();
        assert_eq!(err.cycles, vec![vec!["A", "B", "A"]]);
        assert_eq!(err.to_string(), "dependency cycle: A -> B -> A");
    }

    #[test]
    fn cycle_through_type_rule_and_self_dependency_are_found() {
        let graph = g(json!({
            "Sub": {"resourceType": "AWS::EC2::Subnet", "dependencies": ["Fn"]},
            "Fn": {"resourceType": "AWS::Lambda::Function"},
            "Me": {"resourceType": "AWS::SNS::Topic", "dependencies": ["Me"]}
        }));
        let err = graph.check_acyclic().unwrap_err();
        assert_eq!(err.cycles, vec![vec!["Me", "Me"], vec!["Sub", "Fn", "Sub"]]);
    }

    #[test]
    fn damaged_entries_are_refused_by_name() {
        let e = DeleteGraph::build(&res(json!({"A": 3}))).unwrap_err();
        assert_eq!(
            e,
            DamagedResources::EntryNotObject {
                logical_id: "A".into()
            }
        );
        let e = DeleteGraph::build(&res(json!({"A": {"physicalId": "x"}}))).unwrap_err();
        assert_eq!(
            e,
            DamagedResources::EntryWithoutType {
                logical_id: "A".into()
            }
        );
    }

    #[test]
    fn critical_path_is_longest_weighted_chain() {
        let graph = g(json!({
            "A": {"resourceType": "T", "dependencies": ["B"]},
            "B": {"resourceType": "T", "dependencies": ["C"]},
            "C": {"resourceType": "T"},
            "D": {"resourceType": "T"}
        }));
        assert_eq!(graph.critical_path(|i| [1, 2, 3, 10][i]), 10);
        assert_eq!(graph.critical_path(|i| [5, 2, 3, 1][i]), 10);
    }
}
