// Applying a layer to the values of a functional model being built —
// `Dense{10}(x)`, `Add{}({h, x})` (model/symbolic.hpp) — declared once for
// every layer: each layer struct says GLTRAIN_LAYER_CALLS. The calls are
// templates, so a layer header needs nothing of the functional API: the call
// resolves to gltrain::applyLayer (model/symbolic.hpp) where it is used.
#pragma once
#include <initializer_list>
#include <vector>

// The layer applied to one value, or to several (a merge layer's inputs), of a functional model.
#define GLTRAIN_LAYER_CALLS                           \
    template <class X>                                \
    X operator()(const X& x) const {                  \
        return applyLayer(*this, std::vector<X>{x});  \
    }                                                 \
    template <class X>                                \
    X operator()(std::initializer_list<X> xs) const { \
        return applyLayer(*this, std::vector<X>(xs)); \
    }                                                 \
    template <class X>                                \
    X operator()(const std::vector<X>& xs) const {    \
        return applyLayer(*this, xs);                 \
    }
