// The machine-level context switch: Boost.Context's fcontext, the fastest switch it offers (a
// few saved registers and a stack swap, no signal mask).
#pragma once

#include <boost/context/detail/fcontext.hpp>

namespace weft::detail {

using boost::context::detail::fcontext_t;
using boost::context::detail::jump_fcontext;
using boost::context::detail::make_fcontext;
using boost::context::detail::transfer_t;

}  // namespace weft::detail
