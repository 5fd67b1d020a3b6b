//! Columns of a record batch that cost nothing while every value in them is null.
//!
//! Most of a log's columns are null in every record of a batch: a prefix without `%a` or `%c`
//! gives no application or session, a statement line has no detail, hint or context. A column
//! here counts its leading nulls and makes its builder only at its first value; a column that
//! stays null is [`NullArrays`]' all-null array of its type: one array, made once and shared
//! by every such column of every batch of that length (an Arrow array is immutable). Text is built as Arrow's string view (`Utf8View`): the layout
//! polars keeps its strings in, so polars takes the buffers as they are, and a value of up to
//! 12 bytes (a user, a database, a zone) is held in its view with no data buffer at all.

use std::sync::Arc;

use arrow_array::builder::{PrimitiveBuilder, StringViewBuilder};
use arrow_array::types::ArrowPrimitiveType;
use arrow_array::{ArrayRef, new_null_array};
use arrow_schema::DataType;

/// All-null arrays of one length, one per type, handed out again and again: the columns of a
/// batch that hold no value all point at the same buffers, and so do the next batch's.
#[derive(Default)]
pub(crate) struct NullArrays {
    len: usize,
    arrays: Vec<(DataType, ArrayRef)>,
}

impl NullArrays {
    /// An all-null array of `data_type` and `len` rows.
    pub(crate) fn get(&mut self, data_type: &DataType, len: usize) -> ArrayRef {
        if len != self.len {
            self.len = len;
            self.arrays.clear();
        }
        if let Some((_, array)) = self.arrays.iter().find(|(t, _)| t == data_type) {
            return array.clone();
        }
        let array = new_null_array(data_type, len);
        self.arrays.push((data_type.clone(), array.clone()));
        array
    }
}

/// A nullable text column (`Utf8View`).
pub(crate) struct TextColumn {
    builder: Option<StringViewBuilder>,
    /// Nulls appended before the first value (while `builder` is `None`).
    leading_nulls: usize,
    /// Rows the builder reserves room for when it is made.
    capacity: usize,
}

impl TextColumn {
    /// An empty column that reserves room for `capacity` rows once it holds a value.
    pub(crate) fn new(capacity: usize) -> Self {
        TextColumn {
            builder: None,
            leading_nulls: 0,
            capacity,
        }
    }

    /// Appends `value`, or a null.
    #[inline]
    pub(crate) fn push(&mut self, value: Option<&str>) {
        match (value, &mut self.builder) {
            (None, None) => self.leading_nulls += 1,
            (None, Some(builder)) => builder.append_null(),
            (Some(value), Some(builder)) => builder.append_value(value),
            (Some(value), None) => self.first_value(value),
        }
    }

    #[cold]
    fn first_value(&mut self, value: &str) {
        let mut builder = StringViewBuilder::with_capacity(self.capacity.max(self.leading_nulls));
        for _ in 0..std::mem::take(&mut self.leading_nulls) {
            builder.append_null();
        }
        builder.append_value(value);
        self.builder = Some(builder);
    }

    /// The array of the values appended (`nulls`' when there is none); the column starts
    /// over, empty.
    pub(crate) fn finish(&mut self, nulls: &mut NullArrays) -> ArrayRef {
        match self.builder.take() {
            Some(mut builder) => Arc::new(builder.finish()),
            None => nulls.get(&DataType::Utf8View, std::mem::take(&mut self.leading_nulls)),
        }
    }
}

/// A nullable column of numbers (or timestamps) of Arrow type `T`.
pub(crate) struct NumberColumn<T: ArrowPrimitiveType> {
    builder: Option<PrimitiveBuilder<T>>,
    /// Nulls appended before the first value (while `builder` is `None`).
    leading_nulls: usize,
    /// Rows the builder reserves room for when it is made.
    capacity: usize,
}

impl<T: ArrowPrimitiveType> NumberColumn<T> {
    /// An empty column that reserves room for `capacity` rows once it holds a value.
    pub(crate) fn new(capacity: usize) -> Self {
        NumberColumn {
            builder: None,
            leading_nulls: 0,
            capacity,
        }
    }

    /// Appends `value`, or a null.
    #[inline]
    pub(crate) fn push(&mut self, value: Option<T::Native>) {
        match (value, &mut self.builder) {
            (None, None) => self.leading_nulls += 1,
            (None, Some(builder)) => builder.append_null(),
            (Some(value), Some(builder)) => builder.append_value(value),
            (Some(value), None) => self.first_value(value),
        }
    }

    #[cold]
    fn first_value(&mut self, value: T::Native) {
        let mut builder =
            PrimitiveBuilder::<T>::with_capacity(self.capacity.max(self.leading_nulls + 1));
        builder.append_nulls(std::mem::take(&mut self.leading_nulls));
        builder.append_value(value);
        self.builder = Some(builder);
    }

    /// The array of the values appended, of type `data_type` (`T`'s, or a time zone's);
    /// `nulls`' when there is none. The column starts over, empty.
    pub(crate) fn finish(&mut self, data_type: &DataType, nulls: &mut NullArrays) -> ArrayRef {
        match self.builder.take() {
            Some(mut builder) => Arc::new(builder.finish().with_data_type(data_type.clone())),
            None => nulls.get(data_type, std::mem::take(&mut self.leading_nulls)),
        }
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::types::Int64Type;
    use arrow_array::{Array, Int64Array, StringViewArray};

    use super::*;

    fn text(array: &ArrayRef) -> Vec<Option<&str>> {
        let array = array.as_any().downcast_ref::<StringViewArray>().unwrap();
        array.iter().collect()
    }

    #[test]
    fn a_text_column_keeps_its_leading_nulls_and_values_in_order() {
        let mut column = TextColumn::new(4);
        column.push(None);
        column.push(None);
        column.push(Some("a string longer than twelve bytes"));
        column.push(None);
        column.push(Some("db"));
        let mut nulls = NullArrays::default();
        let array = column.finish(&mut nulls);
        assert_eq!(
            text(&array),
            [
                None,
                None,
                Some("a string longer than twelve bytes"),
                None,
                Some("db")
            ]
        );
        // It starts over, empty, and an all-null batch is all null.
        column.push(None);
        column.push(None);
        let array = column.finish(&mut nulls);
        assert_eq!(text(&array), [None, None]);
        assert_eq!(array.null_count(), 2);
        // Another all-null column of that length shares the array.
        let mut other = TextColumn::new(4);
        other.push(None);
        other.push(None);
        assert!(Arc::ptr_eq(&other.finish(&mut nulls), &array));
        assert_eq!(column.finish(&mut nulls).len(), 0);
    }

    #[test]
    fn a_number_column_keeps_its_leading_nulls_and_values_in_order() {
        let ints = |array: ArrayRef| -> Vec<Option<i64>> {
            let array = array.as_any().downcast_ref::<Int64Array>().unwrap();
            array.iter().collect()
        };
        let mut nulls = NullArrays::default();
        let mut column = NumberColumn::<Int64Type>::new(0);
        column.push(None);
        column.push(Some(7));
        column.push(None);
        assert_eq!(
            ints(column.finish(&DataType::Int64, &mut nulls)),
            [None, Some(7), None]
        );
        for _ in 0..3 {
            column.push(None);
        }
        let array = column.finish(&DataType::Int64, &mut nulls);
        assert_eq!(array.len(), 3);
        assert_eq!(array.null_count(), 3);
        column.push(Some(1));
        assert_eq!(ints(column.finish(&DataType::Int64, &mut nulls)), [Some(1)]);
    }
}
