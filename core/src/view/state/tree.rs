//! docs/state-views.md, "--tree" and "--tree --json" `state list --tree` and `--tree --json`.
//!
//! Parent links come from each record's v6 `parentStack`/`parentLogicalId`/
//! `parentRegion`. Roots are orphans, every member of a parent loop, and nodes the
//! depth cap re-roots; a re-rooted node keeps its own parent fields in `--json`.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::json::json_payload;
use crate::view::state::collate::ref_cmp;
use crate::view::state::list::{format_ref, RefView};
use crate::view::Rendered;

/// Deepest level (0 = root) a node may sit at; a node that would sit deeper becomes a
/// root and its chain continues under it.
pub const MAX_TREE_DEPTH: usize = 100;

/// One listed ref with the parent link its record gave (all `None` for a legacy ref, an
/// unreadable or vanished record, or an invalid link).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TreeEntry {
    pub stack: String,
    pub region: Option<String>,
    pub parent_stack: Option<String>,
    pub parent_logical_id: Option<String>,
    pub parent_region: Option<String>,
}

impl TreeEntry {
    /// The entry for a ref whose record could not be read (or was not read).
    pub fn unlinked(stack: &str, region: Option<&str>) -> Self {
        TreeEntry {
            stack: stack.to_string(),
            region: region.map(str::to_string),
            ..Default::default()
        }
    }

    /// The entry for a ref whose record was read: the link is taken only when
    /// `parentStack` is a string and `parentRegion` is absent or a string;
    /// `parentLogicalId` only when it is a string and the link is valid.
    pub fn from_record(stack: &str, region: Option<&str>, record: &Map<String, Value>) -> Self {
        let mut e = TreeEntry::unlinked(stack, region);
        let parent = record.get("parentStack").and_then(Value::as_str);
        let parent_region = record.get("parentRegion");
        let region_ok = matches!(parent_region, None | Some(Value::String(_)));
        if let (Some(p), true) = (parent, region_ok) {
            e.parent_stack = Some(p.to_string());
            e.parent_region = parent_region.and_then(Value::as_str).map(str::to_string);
            e.parent_logical_id = record
                .get("parentLogicalId")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        e
    }
}

/// A built node: the entry and its sorted children.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeNode {
    pub entry: TreeEntry,
    pub children: Vec<TreeNode>,
}

/// Builds the forest (docs/state-views.md, "--tree"): links by `(parentStack, parentRegion)` = `(stack,
/// region)` with a missing region comparing as empty; loop members and nodes past
/// [`MAX_TREE_DEPTH`] become roots; roots and children sorted by docs/state-views.md, "Order".
pub fn build_tree(entries: Vec<TreeEntry>) -> Vec<TreeNode> {
    // De-duplicate on the key, keeping the first position and the last value.
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    let mut nodes: Vec<TreeEntry> = Vec::new();
    for e in entries {
        let key = (e.stack.clone(), e.region.clone().unwrap_or_default());
        match index.get(&key) {
            Some(&i) => nodes[i] = e,
            None => {
                index.insert(key, nodes.len());
                nodes.push(e);
            }
        }
    }
    let n = nodes.len();
    let parent: Vec<Option<usize>> = nodes
        .iter()
        .map(|e| {
            let p = e.parent_stack.as_ref()?;
            let key = (p.clone(), e.parent_region.clone().unwrap_or_default());
            index.get(&key).copied()
        })
        .collect();

    // Loop members: one pass, each node walked at most once.
    let mut in_loop = vec![false; n];
    let mut settled = vec![false; n];
    let mut on_path: Vec<Option<usize>> = vec![None; n];
    for start in 0..n {
        let mut path = Vec::new();
        let mut cur = Some(start);
        while let Some(c) = cur {
            if settled[c] || on_path[c].is_some() {
                break;
            }
            on_path[c] = Some(path.len());
            path.push(c);
            cur = parent[c];
        }
        if let Some(c) = cur {
            if let Some(pos) = on_path[c] {
                for &m in &path[pos..] {
                    in_loop[m] = true;
                }
            }
        }
        for &c in &path {
            settled[c] = true;
            on_path[c] = None;
        }
    }

    // Depths, capped: loop members are roots (0); walk up to a known depth, assign down.
    let mut depth: Vec<Option<usize>> = (0..n).map(|i| in_loop[i].then_some(0)).collect();
    for start in 0..n {
        if depth[start].is_some() {
            continue;
        }
        let mut path = Vec::new();
        let mut cur = Some(start);
        while let Some(c) = cur {
            if depth[c].is_some() {
                break;
            }
            path.push(c);
            cur = parent[c];
        }
        let mut d: Option<usize> = cur.and_then(|c| depth[c]);
        for &c in path.iter().rev() {
            let next = match d {
                None => 0,
                Some(x) if x + 1 > MAX_TREE_DEPTH => 0,
                Some(x) => x + 1,
            };
            depth[c] = Some(next);
            d = Some(next);
        }
    }

    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for i in 0..n {
        match parent[i] {
            Some(p) if depth[i].unwrap_or(0) > 0 => children[p].push(i),
            _ => roots.push(i),
        }
    }
    let cmp = |a: &usize, b: &usize| {
        let (x, y) = (&nodes[*a], &nodes[*b]);
        ref_cmp(&x.stack, x.region.as_deref(), &y.stack, y.region.as_deref())
    };
    roots.sort_by(cmp);
    for c in children.iter_mut() {
        c.sort_by(cmp);
    }
    // Assemble bottom-up without recursion: children before parents by depth.
    let mut built: Vec<Option<TreeNode>> = vec![None; n];
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(depth[i].unwrap_or(0)));
    for i in order {
        let kids = children[i]
            .iter()
            .filter_map(|&c| built[c].take())
            .collect();
        built[i] = Some(TreeNode {
            entry: nodes[i].clone(),
            children: kids,
        });
    }
    roots.into_iter().filter_map(|r| built[r].take()).collect()
}

/// `state list --tree` (text): `tree(1)` style, each label rendered like a plain row.
pub fn tree_text(roots: &[TreeNode]) -> Rendered {
    let mut lines = Vec::new();
    for root in roots {
        lines.push(label(root));
        push_children(&root.children, "", &mut lines);
    }
    Rendered::new(crate::view::join_lines(&lines), Vec::new())
}

fn label(node: &TreeNode) -> String {
    format_ref(RefView {
        stack: &node.entry.stack,
        region: node.entry.region.as_deref(),
    })
}

fn push_children(children: &[TreeNode], prefix: &str, out: &mut Vec<String>) {
    let last = children.len().saturating_sub(1);
    for (i, child) in children.iter().enumerate() {
        let (branch, cont) = if i == last {
            ("└── ", "    ")
        } else {
            ("├── ", "│   ")
        };
        out.push(format!("{prefix}{branch}{}", label(child)));
        push_children(&child.children, &format!("{prefix}{cont}"), out);
    }
}

fn opt(s: &Option<String>) -> Value {
    s.as_ref().map_or(Value::Null, |s| Value::String(s.clone()))
}

fn node_json(node: &TreeNode) -> Value {
    let e = &node.entry;
    let mut m = Map::new();
    m.insert("stackName".into(), Value::String(e.stack.clone()));
    m.insert("region".into(), opt(&e.region));
    m.insert("parentStack".into(), opt(&e.parent_stack));
    m.insert("parentLogicalId".into(), opt(&e.parent_logical_id));
    m.insert("parentRegion".into(), opt(&e.parent_region));
    m.insert(
        "children".into(),
        Value::Array(node.children.iter().map(node_json).collect()),
    );
    Value::Object(m)
}

/// `state list --tree --json`: the roots as nested objects with exactly the keys
/// `stackName, region, parentStack, parentLogicalId, parentRegion, children`.
pub fn tree_json(roots: &[TreeNode]) -> Rendered {
    let v = Value::Array(roots.iter().map(node_json).collect());
    Rendered::new(json_payload(&v), Vec::new())
}
