// A compile-time list of types, and a loop over it: how the consumers of the
// layer descriptors (layers/all.hpp) and of the op table (graph/op_table.hpp)
// visit every kind, so one that a consumer does not handle is a compile error
// there, not a silent gap.
#pragma once
#include <cstddef>
#include <type_traits>
#include <variant>

namespace gltrain {

template <class... Ts>
struct TypeList {
    static constexpr std::size_t size = sizeof...(Ts);
    using Variant = std::variant<Ts...>;
};

// f(T*) for each T of the list, in order (the pointer is null: it carries the type).
template <class... Ts, class F>
void forEachType(TypeList<Ts...>, F&& f) {
    (f(static_cast<Ts*>(nullptr)), ...);
}

}  // namespace gltrain
