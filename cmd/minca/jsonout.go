package main

import "reflect"

// emptyLists returns a copy of v in which every nil slice is an empty one
// and every nil map an empty one, so that encoding/json writes [] and {}
// where a Go result holds nothing: a program reading minca's output never
// has to tell null from [] (docs/cli.md). Nil pointers stay null. v is not
// changed.
func emptyLists(v any) any {
	if v == nil {
		return nil
	}
	rv := reflect.ValueOf(v)
	c := reflect.New(rv.Type()).Elem()
	c.Set(fillEmpty(rv))
	return c.Interface()
}

// fillEmpty returns v, or a copy of it with its nil lists and maps made
// empty when it holds any.
func fillEmpty(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Slice:
		if v.IsNil() {
			return reflect.MakeSlice(v.Type(), 0, 0)
		}
		if !holdsLists(v.Type().Elem()) {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(fillEmpty(v.Index(i)))
		}
		return c
	case reflect.Map:
		if v.IsNil() {
			return reflect.MakeMap(v.Type())
		}
		if !holdsLists(v.Type().Elem()) {
			return v
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			c.SetMapIndex(it.Key(), fillEmpty(it.Value()))
		}
		return c
	case reflect.Pointer:
		if v.IsNil() || !holdsLists(v.Type().Elem()) {
			return v
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(fillEmpty(v.Elem()))
		return c
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		e := fillEmpty(v.Elem())
		c := reflect.New(v.Type()).Elem()
		c.Set(e)
		return c
	case reflect.Struct:
		if !holdsLists(v.Type()) {
			return v
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		for i := range v.NumField() {
			if c.Field(i).CanSet() {
				c.Field(i).Set(fillEmpty(v.Field(i)))
			}
		}
		return c
	}
	return v
}

// holdsLists reports whether a value of type t can hold a slice or a map,
// so values that cannot are not copied.
func holdsLists(t reflect.Type) bool {
	return holds(t, map[reflect.Type]bool{})
}

func holds(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Slice, reflect.Map, reflect.Interface:
		return true
	case reflect.Pointer:
		return holds(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() && holds(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}
