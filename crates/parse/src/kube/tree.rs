//! A bounded document tree of YAML (and JSON, which YAML 1.2 includes), built from
//! saphyr-parser's events: mappings, sequences and scalars, each with its line. At most
//! [`MAX_NODES`] nodes and [`MAX_DEPTH`] levels; aliases are never expanded (an alias is a node
//! of its own, so `&a [*a, *a, …]` bombs cost one node each); tags are ignored.

use saphyr_parser::{Event, Parser, Span};

/// The most nodes one file may give.
pub(crate) const MAX_NODES: usize = 2_000_000;
/// The deepest nesting read.
pub(crate) const MAX_DEPTH: usize = 200;

/// A node and its line (1-based).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub line: u64,
    pub value: Value,
}

/// What a node holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// A mapping, in the document's order.
    Map(Vec<(String, Node)>),
    /// A sequence.
    Seq(Vec<Node>),
    /// A scalar, as text.
    Scalar(String),
    /// An alias (`*name`): not expanded.
    Alias,
}

impl Node {
    /// The value under `key`, when this is a mapping that has it.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value at a path of keys.
    pub fn at(&self, path: &[&str]) -> Option<&Node> {
        path.iter().try_fold(self, |node, key| node.get(key))
    }

    /// The scalar's text (`null` and `~` are no text).
    pub fn str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(s) if s != "null" && s != "~" => Some(s),
            _ => None,
        }
    }

    /// The items of a sequence (none for anything else).
    pub fn items(&self) -> &[Node] {
        match &self.value {
            Value::Seq(items) => items,
            _ => &[],
        }
    }
}

/// Why a document could not be read whole.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TreeError {
    /// The line (1-based) where reading stopped.
    pub line: u64,
    /// Why.
    pub message: String,
}

/// Every document of `text`, or where and why reading stopped (with the documents finished
/// before).
pub(crate) fn documents(text: &str) -> (Vec<Node>, Option<TreeError>) {
    let mut docs = Vec::new();
    let mut stack: Vec<(Node, Option<String>)> = Vec::new();
    let mut pending_key: Option<String> = None;
    let mut nodes = 0usize;
    let line_of = |span: &Span| span.start.line() as u64;
    for event in Parser::new_from_str(text) {
        let (event, span) = match event {
            Ok(e) => e,
            Err(e) => {
                let error = TreeError {
                    line: e.marker().line() as u64,
                    message: e.info().to_owned(),
                };
                return (docs, Some(error));
            }
        };
        let line = line_of(&span);
        let node = match event {
            Event::Scalar(text, ..) => Some(Node {
                line,
                value: Value::Scalar(text.into_owned()),
            }),
            Event::Alias(_) => Some(Node {
                line,
                value: Value::Alias,
            }),
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                if stack.len() >= MAX_DEPTH {
                    let error = TreeError {
                        line,
                        message: format!("nested deeper than {MAX_DEPTH} levels"),
                    };
                    return (docs, Some(error));
                }
                let value = if matches!(event, Event::MappingStart(..)) {
                    Value::Map(Vec::new())
                } else {
                    Value::Seq(Vec::new())
                };
                stack.push((Node { line, value }, pending_key.take()));
                None
            }
            Event::MappingEnd | Event::SequenceEnd => match stack.pop() {
                Some((node, key)) => {
                    pending_key = key;
                    Some(node)
                }
                None => None,
            },
            _ => None,
        };
        let Some(node) = node else { continue };
        nodes += 1;
        if nodes > MAX_NODES {
            let error = TreeError {
                line,
                message: format!("more than {MAX_NODES} nodes"),
            };
            return (docs, Some(error));
        }
        match stack.last_mut() {
            None => docs.push(node),
            Some((parent, _)) => match &mut parent.value {
                Value::Seq(items) => items.push(node),
                Value::Map(entries) => match pending_key.take() {
                    None => {
                        // A key: a scalar's text; a complex key keeps no name.
                        pending_key = Some(match node.value {
                            Value::Scalar(s) => s,
                            _ => String::new(),
                        });
                    }
                    Some(key) => entries.push((key, node)),
                },
                _ => {}
            },
        }
    }
    (docs, None)
}
